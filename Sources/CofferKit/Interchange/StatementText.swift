import Dispatch
import FinanceCore
import Foundation
import VaultCrypto

/// A bank statement's text (`StatementFile` describes what it accepts), cut into pieces of
/// whole records so that every core reads some of it. It is read three times, none of them
/// holding a record per line: the top, serially, for the separator and the header; a survey
/// (`survey`) of every piece at once for what needs the whole file (the one date format that
/// fits every date, the currencies named, which rows repeat an earlier one); then the pieces
/// again, in order, for their records (`forEachRecord`).
final class StatementText: @unchecked Sendable {
    /// The text, as UTF-8 without a byte-order mark.
    private let bytes: [UInt8]
    let separator: [UInt8]
    let delimiter: Character
    /// The header's fields; nil without a header row.
    let titles: [String]?
    let detectedPreambleLines: Int
    /// Whether the text, trimmed, ends in a quote: an unclosed quote takes the rest of the file
    /// into one field, which a closing quote at the very end does not.
    private let endsInQuote: Bool
    /// The pieces the records after the header are cut into.
    private var pieces: [Piece]
    /// Each record's digest as the first of its kind (occurrence 0), by its number in the file
    /// (from 0, counting only the records that are not empty): two records are alike when
    /// these are; and how many alike came before it.
    private var firstDigests: [UUID] = []
    private var occurrences: [UInt32] = []

    /// Parts the occurrences are counted in at once, by the first byte of the digest.
    private static let occurrenceParts = 8

    /// Records (empty ones included) per piece: enough that handing one to a core costs nothing
    /// beside reading it, few enough that a million lines make hundreds.
    static let recordsPerPiece = 2048

    private struct Piece {
        let start, end: Int
        var firstLine = 0
        /// The number in the file of its first record that is not empty.
        var firstRecord = 0
    }

    init(
        data: Data, name: String, delimiter: Character?, skipLines: Int, hasHeader: Bool,
        encoding: StatementFile.Encoding, detectHeader: Bool
    ) throws {
        var body = data[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let text: String
        if encoding == .utf8 {
            guard let valid = String(validating: body, as: UTF8.self) else { throw Self.notText(name, encoding) }
            text = valid
            bytes = Array(body)
        } else {
            guard let decoded = String(data: Data(body), encoding: encoding.foundation) else {
                throw Self.notText(name, encoding)
            }
            text = decoded
            bytes = Array(decoded.utf8)
        }
        // U+0000 is the zero byte in UTF-8, found without Foundation's string search.
        guard !bytes.contains(0) else {
            throw CofferError(.invalidInput, "\(name) is not a CSV file (it holds binary data).")
        }
        let delimiter = delimiter ?? StatementFile.guessDelimiter(text, skipLines: skipLines)
        self.delimiter = delimiter
        let separator = Array(String(delimiter.unicodeScalars.first!).utf8)
        self.separator = separator
        endsInQuote = Self.endsInQuote(text)

        // The top, serially: the rows the header is looked for in, each with where it starts.
        var top: [(line: Int, start: Int, end: Int, fields: [String])] = []
        var dataStart = bytes.count, dataLine = 1
        bytes.withUnsafeBufferPointer { bytes in
            var index = 0, line = 1
            while index < bytes.count {
                let (fields, next) = CSVRows.record(in: bytes, at: index, separator: separator)
                let start = line
                // A record spans one line plus every line break inside its fields.
                line += 1 + fields.reduce(0) { $0 + StatementFile.lineBreaks(in: $1) }
                defer { index = next }
                guard start > skipLines else { continue }
                guard !fields.allSatisfy({ $0.trimmingSpaces.isEmpty }) else { continue }
                top.append((start, index, next, fields))
                // Without a header, or with one not looked for, the first row settles it.
                if top.count == (hasHeader && detectHeader ? 30 : 1) { break }
            }
            if let first = top.first {
                dataStart = first.start
                dataLine = first.line
            }
        }
        var headerIndex = 0
        if hasHeader, detectHeader, let found = top.firstIndex(where: { StatementColumns.looksLikeHeader($0.fields) }) {
            headerIndex = found
        }
        if hasHeader, top.indices.contains(headerIndex) {
            let header = top[headerIndex]
            titles = header.fields
            detectedPreambleLines = headerIndex > 0 ? header.line - 1 : 0
            dataStart = header.end
            // The record after the header starts where the header's lines end.
            dataLine = header.line + 1 + header.fields.reduce(0) { $0 + StatementFile.lineBreaks(in: $1) }
        } else {
            titles = nil
            detectedPreambleLines = 0
        }
        guard !top.isEmpty else { throw CofferError(.invalidInput, "\(name) holds no lines to import.") }

        // Cut where records end: reading the rest once without making fields.
        var pieces: [Piece] = []
        bytes.withUnsafeBufferPointer { bytes in
            var index = dataStart, start = dataStart, count = 0
            while index < bytes.count {
                index = CSVRows.endOfRecord(in: bytes, at: index, separator: separator)
                count += 1
                if count == Self.recordsPerPiece {
                    pieces.append(Piece(start: start, end: index))
                    start = index
                    count = 0
                }
            }
            if start < bytes.count { pieces.append(Piece(start: start, end: bytes.count)) }
        }
        if !pieces.isEmpty { pieces[0].firstLine = dataLine }
        self.pieces = pieces
    }

    /// Whether `text` trimmed of white space and line ends ends in a quote, found from its end.
    private static func endsInQuote(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard let last = scalars.lastIndex(where: { !CharacterSet.whitespacesAndNewlines.contains($0) }) else {
            return false
        }
        // The last character may join several scalars: a few before it settle which it is.
        let start = scalars.index(last, offsetBy: -8, limitedBy: scalars.startIndex) ?? scalars.startIndex
        return String(String.UnicodeScalarView(scalars[start...last])).hasSuffix("\"")
    }

    private static func notText(_ name: String, _ encoding: StatementFile.Encoding) -> CofferError {
        CofferError(
            .invalidInput, "\(name) is not \(encoding == .utf8 ? "UTF-8" : encoding.rawValue) text.",
            kind: "encoding")
    }

    /// What reading every record found.
    struct Survey {
        /// Records after the header (the empty ones aside).
        var records = 0
        /// With a date column to look at: the candidate formats (`StatementColumns`) every date
        /// in it fits, and the first 50 dates.
        var fittingDateFormats: [DatePattern] = []
        var firstDates: [String] = []
        /// The values of the currency column, when one is named.
        var currencies: [String] = []
    }

    /// Reads every piece at once: counts records and lines, tells rows that repeat an earlier
    /// one, tests each date in `dateColumn` against the candidate formats, and gathers the
    /// values of `currencyColumn`. Refuses a quote never closed. Call it once, before
    /// `forEachRecord`.
    func survey(dateColumn: Int?, currencyColumn: Int?) throws -> Survey {
        struct Found {
            var records = 0, lines = 0
            var keys: [UUID] = []
            var fitting: [Bool]
            var firstDates: [String] = []
            var currencies: [String] = []
            var lastLine = 0
            var lastRunsOn = false
        }
        let candidates = StatementColumns.candidateDateFormats.compactMap { try? DatePattern($0) }
        // Each piece's task writes only its own slot.
        nonisolated(unsafe) let found = UnsafeMutableBufferPointer<Found>.allocate(capacity: pieces.count)
        found.initialize(repeating: Found(fitting: Array(repeating: dateColumn != nil, count: candidates.count)))
        defer {
            found.deinitialize()
            found.deallocate()
        }
        let separator = separator, cut = pieces
        DispatchQueue.concurrentPerform(iterations: cut.count) { number in
            let piece = cut[number]
            var result = found[number]
            var lastRecord: Int?
            self.bytes.withUnsafeBufferPointer { bytes in
                var index = piece.start
                var scratch: [UInt8] = [], content: [UInt8] = []
                while index < piece.end {
                    let recordStart = index
                    var column = 0, breaks = 0, blank = true
                    var date: String?, currency: String?
                    content.removeAll(keepingCapacity: true)
                    // Each field's bytes read as the record's fields would be, without making
                    // them: text beyond printable ASCII goes through the String readings.
                    index = CSVRows.scanRecord(in: bytes, at: index, separator: separator, scratch: &scratch) {
                        field in
                        let plain = field.allSatisfy { (0x20...0x7E).contains($0) }
                        let text = plain ? nil : String(decoding: field, as: UTF8.self)
                        if let text { breaks += StatementFile.lineBreaks(in: text) }
                        if blank { blank = text.map(\.trimmingSpaces.isEmpty) ?? field.allSatisfy { $0 == 0x20 } }
                        let trimmed = plain ? Self.trimmingSpaces(field) : nil
                        func value() -> String {
                            trimmed.map { String(decoding: $0, as: UTF8.self) } ?? text!.trimmingSpaces
                        }
                        if let trimmed {
                            withUnsafeBytes(of: UInt32(trimmed.count).littleEndian) { content.append(contentsOf: $0) }
                            content.append(contentsOf: trimmed)
                        } else {
                            let value = text!.trimmingSpacesAndNewlines.utf8
                            withUnsafeBytes(of: UInt32(value.count).littleEndian) { content.append(contentsOf: $0) }
                            content.append(contentsOf: value)
                        }
                        if column == dateColumn { date = value() }
                        if column == currencyColumn {
                            currency = (text ?? String(decoding: field, as: UTF8.self))
                                .trimmingCharacters(in: .whitespaces).uppercased()
                        }
                        column += 1
                    }
                    let start = result.lines
                    result.lines += 1 + breaks
                    guard !blank else { continue }
                    result.records += 1
                    result.keys.append(Self.digest(of: &content, occurrence: 0))
                    result.lastLine = start
                    lastRecord = recordStart
                    if let date, !date.isEmpty {
                        for (candidate, pattern) in candidates.enumerated() where result.fitting[candidate] {
                            result.fitting[candidate] = pattern.date(from: date) != nil
                        }
                        if result.firstDates.count < 50 { result.firstDates.append(date) }
                    }
                    if let currency, !currency.isEmpty, !result.currencies.contains(currency) {
                        result.currencies.append(currency)
                    }
                }
                if let lastRecord {
                    let fields = CSVRows.record(in: bytes, at: lastRecord, separator: separator).fields
                    result.lastRunsOn = fields.last?.contains(where: \.isNewline) == true
                }
            }
            found[number] = result
        }
        var survey = Survey()
        var fitting = [Bool](repeating: dateColumn != nil, count: candidates.count)
        var line = pieces.first?.firstLine ?? 0
        firstDigests = []
        firstDigests.reserveCapacity(found.reduce(0) { $0 + $1.records })
        var lastRunsOn: (line: Int, runsOn: Bool)?
        for number in pieces.indices {
            pieces[number].firstLine = line
            pieces[number].firstRecord = survey.records
            let piece = found[number]
            firstDigests += piece.keys
            if piece.records > 0 { lastRunsOn = (line + piece.lastLine, piece.lastRunsOn) }
            line += piece.lines
            survey.records += piece.records
            for candidate in fitting.indices { fitting[candidate] = fitting[candidate] && piece.fitting[candidate] }
            survey.firstDates += piece.firstDates.prefix(50 - survey.firstDates.count)
            survey.currencies += piece.currencies.filter { !survey.currencies.contains($0) }
        }
        countOccurrences()
        // An unclosed quote makes the reader (`CSVRows`) take the rest of the file into the last field.
        if let lastRunsOn, lastRunsOn.runsOn, !endsInQuote {
            throw CofferError(.invalidInput, "line \(lastRunsOn.line): a quoted field is never closed.")
        }
        survey.fittingDateFormats = zip(candidates, fitting).filter(\.1).map(\.0)
        return survey
    }

    /// Which records repeat an earlier one, by their first digests: 16 bytes a record, counted
    /// in parts on every core (records alike are in the same part).
    private func countOccurrences() {
        let digests = firstDigests
        occurrences = [UInt32](repeating: 0, count: digests.count)
        occurrences.withUnsafeMutableBufferPointer { counts in
            nonisolated(unsafe) let counts = counts
            DispatchQueue.concurrentPerform(iterations: Self.occurrenceParts) { part in
                var seen: [UUID: UInt32] = .init(minimumCapacity: digests.count / Self.occurrenceParts)
                for (ordinal, digest) in digests.enumerated() where Int(digest.uuid.0) % Self.occurrenceParts == part {
                    let occurrence = seen[digest, default: 0]
                    seen[digest] = occurrence + 1
                    counts[ordinal] = occurrence
                }
            }
        }
    }

    /// How many pieces `forEachRecord` reads.
    var pieceCount: Int { pieces.count }

    /// The records of piece `number`, in order, with their lines and digests: safe to call for
    /// several pieces at once, after `survey`.
    func forEachRecord(inPiece number: Int, _ body: (StatementFile.Record) throws -> Void) rethrows {
        let piece = pieces[number]
        var line = piece.firstLine, ordinal = piece.firstRecord
        try bytes.withUnsafeBufferPointer { bytes in
            var index = piece.start
            while index < piece.end {
                let (fields, next) = CSVRows.record(in: bytes, at: index, separator: separator)
                index = next
                let start = line
                line += 1 + fields.reduce(0) { $0 + StatementFile.lineBreaks(in: $1) }
                guard !fields.allSatisfy({ $0.trimmingSpaces.isEmpty }) else { continue }
                let occurrence = occurrences[ordinal]
                // The first of its kind has the digest the survey made.
                let digest =
                    occurrence == 0
                    ? firstDigests[ordinal]
                    : Self.withContent(of: fields) { Self.digest(of: &$0, occurrence: occurrence) }
                ordinal += 1
                try body(
                    StatementFile.Record(
                        line: start, fields: fields, digest: withUnsafeBytes(of: digest.uuid, Array.init)))
            }
        }
    }

    /// What a row's digest is made of: each field trimmed, after its length (u32, little-endian).
    private static func withContent<Result>(of fields: [String], _ body: (inout [UInt8]) -> Result) -> Result {
        var content: [UInt8] = []
        for field in fields {
            let value = field.trimmingSpacesAndNewlines.utf8
            withUnsafeBytes(of: UInt32(value.count).littleEndian) { content.append(contentsOf: $0) }
            content.append(contentsOf: value)
        }
        return body(&content)
    }

    /// Printable ASCII without the spaces at either end (`trimmingSpaces`, and
    /// `trimmingSpacesAndNewlines`, read it so).
    private static func trimmingSpaces(_ field: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = field.count
        while start < end, field[start] == 0x20 { start += 1 }
        while end > start, field[end - 1] == 0x20 { end -= 1 }
        return UnsafeBufferPointer(rebasing: field[start..<end])
    }

    /// BLAKE2b-128 of `content` and `occurrence` (u32, little-endian).
    private static func digest(of content: inout [UInt8], occurrence: UInt32) -> UUID {
        withUnsafeBytes(of: occurrence.littleEndian) { content.append(contentsOf: $0) }
        return content.withUnsafeBytes { input in
            withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { digest in
                BLAKE2b.hash(input, into: digest)
                return UUID(uuid: UnsafeRawBufferPointer(digest).loadUnaligned(as: uuid_t.self))
            }
        }
    }
}
