/// The rows of a CSV text, read byte by byte as CSV.swift 2.5 read them (Coffer's reader
/// before, so every statement that imported then reads the same now): fields end at the
/// delimiter and rows at CR, LF or CRLF, outside quotes; a field that starts with a quote runs
/// to the quote that is followed by a delimiter, a line end or the end of the text, and `""`
/// inside it is one quote. A quote followed by anything else is kept, that one character
/// dropped, and the field goes on, still quoted (CSV.swift's leniency). A delimiter after the last field, at the very end, adds an
/// empty field.
///
/// The delimiter and the three marks are matched as UTF-8 bytes: a character's encoding never
/// appears inside another's, so the fields are those a reader of Unicode scalars finds.
enum CSVRows {
    private static let quote = UInt8(ascii: "\""), carriageReturn = UInt8(ascii: "\r"), lineFeed = UInt8(ascii: "\n")

    static func forEach(in text: String, delimiter: Unicode.Scalar, _ body: ([String]) throws -> Void) rethrows {
        var text = text
        let separator = Array(String(delimiter).utf8)
        try text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                let (fields, next) = record(in: bytes, at: index, separator: separator)
                index = next
                try body(fields)
            }
        }
    }

    /// The record that starts at `index` (which must be inside `bytes`), and where the next one
    /// starts.
    static func record(in bytes: UnsafeBufferPointer<UInt8>, at start: Int, separator: [UInt8]) -> (
        fields: [String], next: Int
    ) {
        var row: [String] = []
        var scratch: [UInt8] = []
        let next = scanRecord(in: bytes, at: start, separator: separator, scratch: &scratch) {
            row.append(String(decoding: $0, as: UTF8.self))
        }
        return (row, next)
    }

    /// Where the record that starts at `index` ends, as `record` reads it, without making its
    /// fields: how a statement is cut into pieces for every core.
    static func endOfRecord(in bytes: UnsafeBufferPointer<UInt8>, at start: Int, separator: [UInt8]) -> Int {
        var scratch: [UInt8] = []
        return scanRecord(in: bytes, at: start, separator: separator, scratch: &scratch) { _ in }
    }

    /// Reads the record that starts at `index`, giving `field` each field's bytes (a quoted
    /// field's unquoted into `scratch`), and returns where the next record starts: the one
    /// reading `record` and the statement survey share.
    static func scanRecord(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, separator: [UInt8], scratch: inout [UInt8],
        field: (UnsafeBufferPointer<UInt8>) -> Void
    ) -> Int {
        let end = bytes.count
        var index = start
        fields: while true {
            guard index < end else {
                field(UnsafeBufferPointer(rebasing: bytes[end..<end]))
                break
            }
            if bytes[index] == quote {
                index += 1
                scratch.removeAll(keepingCapacity: true)
                while true {
                    guard index < end else {
                        scratch.withUnsafeBufferPointer(field)
                        break fields
                    }
                    let byte = bytes[index]
                    index += 1
                    guard byte == quote else {
                        scratch.append(byte)
                        continue
                    }
                    guard index < end else {
                        scratch.withUnsafeBufferPointer(field)
                        break fields
                    }
                    let next = bytes[index]
                    if next == carriageReturn || next == lineFeed {
                        index = afterLineEnd(bytes, index)
                        scratch.withUnsafeBufferPointer(field)
                        break fields
                    } else if isDelimiter(bytes, at: index, separator) {
                        index += separator.count
                        scratch.withUnsafeBufferPointer(field)
                        continue fields
                    } else if next == quote {
                        index += 1
                        scratch.append(quote)
                    } else {
                        scratch.append(quote)
                        index += Self.scalarLength(leadingByte: next)
                    }
                }
            } else {
                let fieldStart = index
                while index < end, bytes[index] != carriageReturn, bytes[index] != lineFeed,
                    !isDelimiter(bytes, at: index, separator)
                {
                    index += 1
                }
                field(UnsafeBufferPointer(rebasing: bytes[fieldStart..<index]))
                guard index < end else { break fields }
                if isDelimiter(bytes, at: index, separator) {
                    index += separator.count
                    continue fields
                }
                index = afterLineEnd(bytes, index)
                break fields
            }
        }
        return index
    }

    private static func isDelimiter(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, _ separator: [UInt8]) -> Bool {
        guard bytes[index] == separator[0] else { return false }
        guard separator.count > 1 else { return true }
        guard index + separator.count <= bytes.count else { return false }
        return (1..<separator.count).allSatisfy { bytes[index + $0] == separator[$0] }
    }

    /// After a line end at `index`: CRLF is one.
    private static func afterLineEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int {
        bytes[index] == carriageReturn && index + 1 < bytes.count && bytes[index + 1] == lineFeed
            ? index + 2 : index + 1
    }

    private static func scalarLength(leadingByte byte: UInt8) -> Int {
        switch byte {
        case 0xF0...: 4
        case 0xE0...: 3
        case 0xC0...: 2
        default: 1
        }
    }
}
