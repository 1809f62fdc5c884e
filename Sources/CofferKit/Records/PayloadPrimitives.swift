import FinanceCore
import Foundation

// The field encodings every payload is made of (Specs/record-payloads.md): LEB128 varints
// (signed ones zig-zag encoded), length-prefixed UTF-8 strings and bytes, raw 16-byte ids, dates
// as days since 1970, and optionals and lists. The enum tags are in WireTags.swift.

/// Appends a payload's fields in order.
struct PayloadWriter {
    private(set) var bytes: [UInt8] = []

    /// Kind, then the version this kind is written with today.
    mutating func header(_ kind: RecordKind) {
        bytes.append(kind.rawValue)
        bytes.append(kind.currentVersion)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func unsigned(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }
    mutating func int(_ value: Int) { signed(Int64(value)) }
    mutating func money(_ value: Money) { signed(value.minorUnits) }
    mutating func date(_ date: CalendarDate) { signed(Int64(date.dayNumber)) }

    mutating func bytes(_ value: [UInt8]) {
        unsigned(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) { bytes(Array(value.utf8)) }

    /// Fixed-length bytes, no length prefix (ids and keys whose size the format fixes).
    mutating func raw(_ value: [UInt8]) { bytes.append(contentsOf: value) }

    mutating func uuid(_ value: UUID) { withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) } }

    mutating func optional<T>(_ value: T?, _ write: (inout PayloadWriter, T) -> Void) {
        guard let value else { return byte(0) }
        byte(1)
        write(&self, value)
    }

    /// A count, then each item.
    mutating func list<T>(_ items: [T], _ write: (inout PayloadWriter, T) -> Void) {
        unsigned(UInt64(items.count))
        for item in items { write(&self, item) }
    }
}

/// Bounds-checked reader: a truncated or malformed payload throws, never traps.
struct PayloadReader {
    static let malformed = FinanceError(.invalidRecord, "A record's contents are malformed.")
    private let buffer: UnsafeRawBufferPointer
    private var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var isAtEnd: Bool { offset == buffer.count }

    mutating func byte() throws -> UInt8 {
        guard offset < buffer.count else { throw Self.malformed }
        defer { offset += 1 }
        return buffer[offset]
    }

    /// 0 or 1; any other byte is malformed.
    mutating func bool() throws -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw Self.malformed
        }
    }

    mutating func unsigned() throws -> UInt64 {
        var result: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            let next = try byte()
            result |= UInt64(next & 0x7f) << UInt64(shift)
            if next & 0x80 == 0 { return result }
        }
        throw Self.malformed
    }

    mutating func signed() throws -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A signed field held in an `Int`; one that does not fit is malformed.
    mutating func int() throws -> Int {
        guard let value = Int(exactly: try signed()) else { throw Self.malformed }
        return value
    }

    /// An unsigned field held in an `Int` (invoice numbers); one that does not fit is malformed.
    mutating func unsignedInt() throws -> Int {
        guard let value = Int(exactly: try unsigned()) else { throw Self.malformed }
        return value
    }

    mutating func money() throws -> Money { Money(minorUnits: try signed()) }

    mutating func date() throws -> CalendarDate {
        let number = try signed()
        guard let day = Int(exactly: number), (-719_162...2_932_896).contains(day) else { throw Self.malformed }
        return CalendarDate(dayNumber: day)
    }

    mutating func bytes() throws -> [UInt8] {
        let count = try unsigned()
        guard count <= UInt64(buffer.count - offset) else { throw Self.malformed }
        defer { offset += Int(count) }
        return Array(buffer[offset..<offset + Int(count)])
    }

    /// Fixed-length bytes handed to `read` in place, without a copy (ids in large files).
    mutating func raw<T>(_ count: Int, _ read: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        guard buffer.count - offset >= count else { throw Self.malformed }
        defer { offset += count }
        return try read(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]))
    }

    mutating func raw(_ count: Int) throws -> [UInt8] {
        guard buffer.count - offset >= count else { throw Self.malformed }
        defer { offset += count }
        return Array(buffer[offset..<offset + count])
    }

    mutating func string() throws -> String {
        guard let text = String(validating: try bytes(), as: UTF8.self) else { throw Self.malformed }
        return text
    }

    mutating func uuid() throws -> UUID {
        guard buffer.count - offset >= 16 else { throw Self.malformed }
        defer { offset += 16 }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 16]))
        }
        return UUID(uuid: raw)
    }

    mutating func optional<T>(_ read: (inout PayloadReader) throws -> T) throws -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw Self.malformed
        }
    }

    /// A count, then each item. Every item takes at least one byte, so a count larger than the
    /// bytes left is malformed before anything is read (no loop over a count the payload cannot hold).
    mutating func list<T>(_ read: (inout PayloadReader) throws -> T) throws -> [T] {
        let count = try unsigned()
        guard count <= UInt64(buffer.count - offset) else { throw Self.malformed }
        var items: [T] = []
        for _ in 0..<count { items.append(try read(&self)) }
        return items
    }
}

extension PayloadWriter {
    /// `optional<flow>`: from `optional<uuid>`, to `optional<uuid>`, order `uvarint`.
    mutating func flow(_ flow: AccountFlow?) {
        optional(flow) { writer, flow in
            writer.optional(flow.from) { $0.uuid($1) }
            writer.optional(flow.to) { $0.uuid($1) }
            writer.unsigned(flow.order)
        }
    }
}

extension PayloadReader {
    /// A flow with neither end is malformed: nothing would move.
    mutating func flow() throws -> AccountFlow? {
        try optional { reader in
            let from = try reader.optional { try $0.uuid() }, to = try reader.optional { try $0.uuid() }
            guard from != nil || to != nil else { throw Self.malformed }
            return AccountFlow(from: from, to: to, order: try reader.unsigned())
        }
    }
}
