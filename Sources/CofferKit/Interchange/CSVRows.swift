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
            let end = bytes.count
            func isDelimiter(at index: Int) -> Bool {
                guard bytes[index] == separator[0] else { return false }
                guard separator.count > 1 else { return true }
                guard index + separator.count <= end else { return false }
                return (1..<separator.count).allSatisfy { bytes[index + $0] == separator[$0] }
            }
            /// After a line end at `index`: CRLF is one.
            func afterLineEnd(_ index: Int) -> Int {
                bytes[index] == carriageReturn && index + 1 < end && bytes[index + 1] == lineFeed
                    ? index + 2 : index + 1
            }
            var index = 0
            while index < end {
                var row: [String] = []
                fields: while true {
                    guard index < end else {
                        row.append("")
                        break
                    }
                    if bytes[index] == quote {
                        index += 1
                        var field: [UInt8] = []
                        while true {
                            guard index < end else {
                                row.append(String(decoding: field, as: UTF8.self))
                                break fields
                            }
                            let byte = bytes[index]
                            index += 1
                            guard byte == quote else {
                                field.append(byte)
                                continue
                            }
                            guard index < end else {
                                row.append(String(decoding: field, as: UTF8.self))
                                break fields
                            }
                            let next = bytes[index]
                            if next == carriageReturn || next == lineFeed {
                                index = afterLineEnd(index)
                                row.append(String(decoding: field, as: UTF8.self))
                                break fields
                            } else if isDelimiter(at: index) {
                                index += separator.count
                                row.append(String(decoding: field, as: UTF8.self))
                                continue fields
                            } else if next == quote {
                                index += 1
                                field.append(quote)
                            } else {
                                field.append(quote)
                                index += Self.scalarLength(leadingByte: next)
                            }
                        }
                    } else {
                        let start = index
                        while index < end, bytes[index] != carriageReturn, bytes[index] != lineFeed,
                            !isDelimiter(at: index)
                        {
                            index += 1
                        }
                        row.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                        guard index < end else { break fields }
                        if isDelimiter(at: index) {
                            index += separator.count
                            continue fields
                        }
                        index = afterLineEnd(index)
                        break fields
                    }
                }
                try body(row)
            }
        }
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
