import Foundation
import VaultCrypto

/// A record's random 16-byte identifier. It carries no meaning, so it reveals nothing.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    public let bytes: [UInt8]

    public init<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        guard bytes.count == Self.byteCount else {
            throw VaultError(.integrityFailure, "A record id must be 16 bytes, not \(bytes.count).")
        }
        self.bytes = Array(bytes)
    }

    public static func random() -> RecordID { try! RecordID(SecureRandom.bytes(count: byteCount)) }

    /// Lower-case hex, as shown in verification reports.
    public var hex: String { bytes.hexString }

    public init(hex: String) throws {
        guard let bytes = [UInt8](hexString: hex) else {
            throw VaultError(.integrityFailure, "'\(hex)' is not a record id.")
        }
        try self.init(bytes)
    }

    public var description: String { hex }

    /// Byte-wise order, the same order SQLite uses for BLOB keys.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// Records are spread over 256 manifest buckets by their first byte.
    var bucket: Int { Int(bytes[0]) }
}

/// One decrypted record.
public struct VaultRecord: Sendable, Equatable {
    public let id: RecordID
    /// Starts at 1 and grows by one with every write of this record.
    public let version: UInt64
    public let payload: Data
}

/// A change to apply in one transaction.
public enum RecordChange: Sendable {
    case put(RecordID, Data)
    case delete(RecordID)

    var id: RecordID {
        switch self {
        case .put(let id, _), .delete(let id): id
        }
    }
}
