import Foundation

/// The one error type of FinanceCore. Messages quote what the user typed and say what was
/// expected; they never contain stored amounts or other vault contents.
public struct FinanceError: Error, LocalizedError, Equatable, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidAmount = Code("invalidAmount")
        public static let invalidDate = Code("invalidDate")
        public static let invalidRate = Code("invalidRate")
        public static let invalidName = Code("invalidName")
        public static let unknownCurrency = Code("unknownCurrency")
        /// A stored record that cannot be decoded (malformed, or from a newer Coffer).
        public static let invalidRecord = Code("invalidRecord")
        /// An invoice change its status does not allow (e.g. paying a draft, editing a sent one).
        public static let invalidTransition = Code("invalidTransition")
        /// A payment larger than what is outstanding.
        public static let overpayment = Code("overpayment")
        /// A sum or projection left the range of 64-bit minor units.
        public static let overflow = Code("overflow")
    }

    public let code: Code
    public let errorDescription: String?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.errorDescription = message
    }

    public static func == (lhs: FinanceError, rhs: FinanceError) -> Bool { lhs.code == rhs.code }
}
