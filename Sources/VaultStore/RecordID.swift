import Foundation
import VaultCrypto

/// A record's 16-byte identifier: random in older vaults, ordered by when it was made in newer
/// ones (`RecordIDs` in FinanceCore); only ever stored inside the vault's encryption.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    /// The 16 bytes as two big-endian words: no allocation per id, and comparing the words
    /// compares the bytes in order.
    package let high: UInt64
    package let low: UInt64

    public init<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        guard bytes.count == Self.byteCount else {
            throw VaultError(.integrityFailure, "A record id must be 16 bytes, not \(bytes.count).")
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// 16 contiguous bytes, read as two words: what a parser of a large index or file uses (the
    /// generic initialiser above cannot be specialised from another module, and costs about a
    /// microsecond per id).
    public init(contiguous bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count == Self.byteCount else {
            throw VaultError(.integrityFailure, "A record id must be 16 bytes, not \(bytes.count).")
        }
        self.init(unsafe: bytes.baseAddress!)
    }

    /// Reads 16 bytes at `pointer`, already known to be there.
    init(unsafe pointer: UnsafeRawPointer) {
        high = UInt64(bigEndian: pointer.loadUnaligned(as: UInt64.self))
        low = UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// The smallest id whose first byte is `bucket`.
    init(firstOfBucket bucket: Int) {
        high = UInt64(bucket) << 56
        low = 0
    }

    public init(uuid: UUID) {
        self = withUnsafeBytes(of: uuid.uuid) { RecordID(unsafe: $0.baseAddress!) }
    }

    /// The same 16 bytes as a UUID (the finance layer's ids), without an allocation.
    public var uuid: UUID {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    public var bytes: [UInt8] {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
    }

    /// The 16 bytes, for the time of `body`, without an allocation (archives write millions).
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(of: (high.bigEndian, low.bigEndian), body)
    }

    public static func random() -> RecordID { try! RecordID(SecureRandom.bytes(count: byteCount)) }

    /// Both words mixed into one (splitmix64's finaliser over `high ⊕ low × golden ratio`): a
    /// well-spread number for ids that share whole runs of bytes (ordered ids share their first
    /// six for weeks and their last eight within a process), for hash slots and short ids.
    package var mixed: UInt64 {
        var mixed = high ^ (low &* 0x9E37_79B9_7F4A_7C15)
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

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
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Records are spread over 256 manifest buckets by their first byte.
    var bucket: Int { Int(high >> 56) }
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

    var isDelete: Bool { if case .delete = self { true } else { false } }

    var id: RecordID {
        switch self {
        case .put(let id, _), .delete(let id): id
        }
    }
}
