import Foundation

/// Little-endian writer for the fixed binary layouts in Specs/vault-format.md.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append<Bytes: Sequence>(_ more: Bytes) where Bytes.Element == UInt8 { bytes.append(contentsOf: more) }
    mutating func append(_ value: UInt8) { bytes.append(value) }
    mutating func append(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    /// An id's 16 bytes, without the array `RecordID.bytes` makes (an index writes a million).
    mutating func append(_ id: RecordID) { id.withBytes { bytes.append(contentsOf: $0) } }
}

/// Bounds-checked little-endian reader; running past the end throws instead of trapping, so a
/// truncated or crafted file becomes an error message.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0
    private let makeError: () -> Error

    init<Bytes: Collection>(_ bytes: Bytes, onTruncation makeError: @escaping () -> Error)
    where Bytes.Element == UInt8 {
        self.bytes = Array(bytes)
        self.makeError = makeError
    }

    var remaining: Int { bytes.count - offset }

    mutating func read(_ count: Int) throws -> [UInt8] {
        guard count >= 0, remaining >= count else { throw makeError() }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A fixed-width value loaded in place: page indexes hold a million of them, and a copy per
    /// field would be most of the cost of reading one.
    private mutating func load<Value: FixedWidthInteger>(_: Value.Type) throws -> Value {
        let size = MemoryLayout<Value>.size
        guard remaining >= size else { throw makeError() }
        defer { offset += size }
        return Value(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Value.self) })
    }

    mutating func readUInt8() throws -> UInt8 { try load(UInt8.self) }
    mutating func readUInt16() throws -> UInt16 { try load(UInt16.self) }
    mutating func readUInt32() throws -> UInt32 { try load(UInt32.self) }
    mutating func readUInt64() throws -> UInt64 { try load(UInt64.self) }

    mutating func readRecordID() throws -> RecordID {
        guard remaining >= 16 else { throw makeError() }
        defer { offset += 16 }
        return try bytes.withUnsafeBytes {
            try RecordID(contiguous: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + 16]))
        }
    }
}
