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

    mutating func readUInt8() throws -> UInt8 { try read(1)[0] }

    mutating func readUInt16() throws -> UInt16 {
        try read(2).reversed().reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func readUInt32() throws -> UInt32 {
        try read(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func readUInt64() throws -> UInt64 {
        try read(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
