import Foundation

/// Where an export's bytes come from: a file, read a window at a time so that a million records
/// never sit in memory at once, or bytes already read (standard input).
public final class ExportSource {
    private enum Storage {
        case file(FileHandle)
        case bytes(Data)
    }
    private let storage: Storage
    /// How many bytes a window reads at a time.
    let windowSize: Int

    public convenience init(data: Data) { self.init(data: data, windowSize: Self.defaultWindowSize) }

    init(data: Data, windowSize: Int) {
        storage = .bytes(data)
        self.windowSize = windowSize
    }

    /// Nil when the file cannot be opened for reading.
    public convenience init?(path: String) { self.init(path: path, windowSize: Self.defaultWindowSize) }

    init?(path: String, windowSize: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        storage = .file(handle)
        self.windowSize = windowSize
    }

    static let defaultWindowSize = 4 << 20

    deinit {
        if case .file(let handle) = storage { try? handle.close() }
    }

    /// Up to `count` bytes from `offset`; fewer only at the end.
    func read(at offset: Int, count: Int) throws -> Data {
        switch storage {
        case .bytes(let data):
            let start = data.startIndex + min(offset, data.count)
            return data[start..<min(data.endIndex, start + count)]
        case .file(let handle):
            try handle.seek(toOffset: UInt64(offset))
            return try handle.read(upToCount: count) ?? Data()
        }
    }
}

extension ExportSource {
    /// Where and why a document failed to decode, for the message that refuses it.
    public static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context): "'\(key.stringValue)' is missing at \(path(context))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong value at \(path(context))"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "not valid JSON" : "invalid value at \(path(context))"
        default: "unreadable"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(
            in: CharacterSet(charactersIn: "."))
    }
}

/// A JSON document read through a sliding window: values are found by their bounds (strings and
/// brackets tracked, nothing built), and the window keeps only from the value being read on. What
/// lies inside a value is left to `JSONDecoder`, which sees every byte of it.
final class JSONWindow {
    private let source: ExportSource
    /// The bytes from file offset `base` on.
    private(set) var bytes: [UInt8] = []
    private(set) var base = 0
    private var exhausted = false
    /// The offset of the next byte to read.
    var position = 0
    /// Called before the window drops the bytes before `position`: a reader holding ranges into
    /// the window uses them first.
    var beforeSliding: (() throws -> Void)?

    /// A window on `source` from `offset` on.
    init(_ source: ExportSource, at offset: Int = 0) {
        self.source = source
        base = offset
        position = offset
    }

    static var malformed: DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON"))
    }

    /// Reads on: the window keeps from `position`; false at the end of the document.
    private func extend() throws -> Bool {
        guard !exhausted else { return false }
        try beforeSliding?()
        bytes.removeFirst(position - base)
        base = position
        let more = try source.read(at: base + bytes.count, count: source.windowSize)
        if more.count < source.windowSize { exhausted = true }
        bytes.append(contentsOf: more)
        return !more.isEmpty
    }

    /// The next byte after whitespace, not consumed; nil at the end of the document.
    func peek() throws -> UInt8? {
        while true {
            while position - base < bytes.count {
                switch bytes[position - base] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                case let byte: return byte
                }
            }
            guard try extend() else { return nil }
        }
    }

    func expect(_ byte: UInt8) throws {
        guard try peek() == byte else { throw Self.malformed }
        position += 1
    }

    /// Consumes `byte` if it comes next.
    func take(_ byte: UInt8) throws -> Bool {
        guard try peek() == byte else { return false }
        position += 1
        return true
    }

    /// The file range of the value at `position`, which is moved past it.
    func value() throws -> Range<Int> {
        guard try peek() != nil else { throw Self.malformed }
        while true {
            let start = position - base
            let result = bytes.withUnsafeBufferPointer { Self.scanValue($0, from: start, final: exhausted) }
            switch result {
            case .complete(let end):
                defer { position = base + end }
                return position..<(base + end)
            case .incomplete:
                guard try extend() else { throw Self.malformed }
            case .malformed:
                throw Self.malformed
            }
        }
    }

    /// A string value's text.
    func key() throws -> String {
        let range = try value()
        guard bytes[range.lowerBound - base] == UInt8(ascii: "\"") else { throw Self.malformed }
        let text = bytes[(range.lowerBound - base + 1)..<(range.upperBound - base - 1)]
        guard text.contains(UInt8(ascii: "\\")) || text.contains(where: { $0 < 0x20 || $0 >= 0x80 }) else {
            return String(decoding: text, as: UTF8.self)
        }
        return try JSONDecoder().decode(String.self, from: Data(slice(range)))
    }

    /// The bytes of a range still in the window.
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        bytes[(range.lowerBound - base)..<(range.upperBound - base)]
    }

    /// Calls `element` with the range of each element of the array at `position`, then moves
    /// past it. The ranges stay readable (`slice`) until `beforeSliding` is called.
    func forEachElement(_ element: (Range<Int>) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if try take(UInt8(ascii: "]")) { return }
        while true {
            try element(try value())
            if try take(UInt8(ascii: ",")) { continue }
            try expect(UInt8(ascii: "]"))
            return
        }
    }

    enum Scan {
        case complete(end: Int)
        case incomplete
        case malformed
    }

    /// Where the value starting at `start` ends.
    static func scanValue(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, final: Bool) -> Scan {
        var position = start
        func string() -> Bool? {
            position += 1
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""): position += 1; return true
                default: position += 1
                }
            }
            return nil
        }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return string() == nil ? (final ? .malformed : .incomplete) : .complete(end: position)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var open: [UInt8] = []
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return final ? .malformed : .incomplete }
                    continue
                case UInt8(ascii: "{"): open.append(UInt8(ascii: "}"))
                case UInt8(ascii: "["): open.append(UInt8(ascii: "]"))
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard open.popLast() == bytes[position] else { return .malformed }
                    if open.isEmpty { return .complete(end: position + 1) }
                default: break
                }
                position += 1
            }
            return final ? .malformed : .incomplete
        default:
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                    return position > start ? .complete(end: position) : .malformed
                default: position += 1
                }
            }
            return final ? .complete(end: position) : .incomplete
        }
    }
}

/// A coding key for the paths in decoding errors (`updates[12].amount`).
struct ExportCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { (self.stringValue, intValue) = (stringValue, nil) }
    init(intValue: Int) { (stringValue, self.intValue) = (String(intValue), intValue) }
}

/// Fuzzing's way in: an export read as `coffer import json` reads it (the outline, each long
/// section's items found through a small window and read by the item decoder), without a vault.
package func fuzzExportReader(_ bytes: [UInt8]) {
    let source = ExportSource(data: Data(bytes), windowSize: 64)
    _ = try? ExportOutline(source) { _, window, members in
        _ = ExportDocument.Converter(prerequisitesIn: members)
        try window.forEachElement { range in
            let item = Array(window.slice(range))
            item.withUnsafeBufferPointer { buffer in
                _ = ExportItemParser.items(buffer, [0..<buffer.count][...], ExportItemParser.update)
                _ = ExportItemParser.items(buffer, [0..<buffer.count][...], ExportItemParser.entry)
            }
        }
        return true
    }
}
