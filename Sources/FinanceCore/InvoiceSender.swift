import Foundation

/// How invoice references are made from the number: `INV-{0000}` (the default) or, say,
/// `INV-{YYYY}-{0000}`. `{0000}` is the number, zero-padded to as many digits as it has zeros
/// (one to nine); `{YYYY}` the issue year. The reference is fixed when an invoice is created.
public struct InvoiceNumberFormat: Hashable, Sendable, CustomStringConvertible {
    public static let standard = InvoiceNumberFormat(pattern: "INV-{0000}")

    enum Part: Hashable, Sendable {
        case text(String)
        case number(Int)
        case year
    }

    /// The format as typed: the only thing stored (the parts are read from it when used).
    public let pattern: String

    private init(pattern: String) { self.pattern = pattern }

    /// Its literal text and tokens, in order; nil for a format `init(parsing:)` refuses.
    static func parts(of text: String) -> [Part]? {
        guard (1...40).contains(text.count) else { return nil }
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(text)
        while let first = rest.first {
            if first == "{" {
                guard let close = rest.firstIndex(of: "}") else { return nil }
                let token = rest[rest.index(after: rest.startIndex)..<close]
                if !literal.isEmpty { parts.append(.text(literal)) }
                literal = ""
                if token == "YYYY" {
                    parts.append(.year)
                } else if (1...9).contains(token.count), token.allSatisfy({ $0 == "0" }) {
                    parts.append(.number(token.count))
                } else {
                    return nil
                }
                rest = rest[rest.index(after: close)...]
                continue
            }
            guard first.isASCII, first.isLetter || first.isNumber || "-_/.#".contains(first) else { return nil }
            literal.append(first)
            rest = rest.dropFirst()
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        guard parts.filter({ if case .number = $0 { true } else { false } }).count == 1 else { return nil }
        return parts
    }

    /// Refuses a format without exactly one `{0…}`, with any other `{…}`, or with characters
    /// other than letters, digits and `- _ / . #` (a reference is typed back in commands).
    public init(parsing text: String) throws {
        let invalid = FinanceError(
            .invalidName,
            "Enter a number format such as INV-{0000} or INV-{YYYY}-{0000}: letters, digits and - _ / . #, "
                + "the number once as {0000} (its width in zeros), and {YYYY} for the issue year.")
        guard Self.parts(of: text) != nil else { throw invalid }
        self.init(pattern: text)
    }

    /// `INV-0007`, `INV-2026-0007`. Built without `String(format:)`, which costs microseconds.
    public func reference(number: Int, issued: CalendarDate) -> String {
        (Self.parts(of: pattern) ?? []).map { part in
            switch part {
            case .text(let text): return text
            case .year: return String(issued.year)
            case .number(let width):
                let digits = String(number)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
        }.joined()
    }

    public var description: String { pattern }
}

/// Who sends the invoices: printed on every invoice and under every reminder. One per vault.
public struct InvoiceSender: Hashable, Sendable {
    /// What the tax line and the tax number are called on an invoice.
    public enum TaxLabel: String, Sendable, CaseIterable {
        case tax, vat

        /// `Tax`, `VAT`.
        public var title: String { self == .vat ? "VAT" : "Tax" }
    }

    public var name: String?
    /// Multi-line.
    public var address: String?
    public var email: String?
    /// A tax or VAT registration number.
    public var taxNumber: String?
    /// Multi-line: how to pay.
    public var paymentInstructions: String?
    /// Multi-line: the account to pay into.
    public var bankDetails: String?
    public var taxLabel: TaxLabel
    public var numberFormat: InvoiceNumberFormat

    public init(
        name: String? = nil, address: String? = nil, email: String? = nil, taxNumber: String? = nil,
        paymentInstructions: String? = nil, bankDetails: String? = nil, taxLabel: TaxLabel = .tax,
        numberFormat: InvoiceNumberFormat = .standard
    ) {
        self.name = name
        self.address = address
        self.email = email
        self.taxNumber = taxNumber
        self.paymentInstructions = paymentInstructions
        self.bankDetails = bankDetails
        self.taxLabel = taxLabel
        self.numberFormat = numberFormat
    }
}
