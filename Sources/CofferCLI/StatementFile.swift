import CSV
import FinanceCore
import Foundation
import VaultCrypto

/// A bank statement read with CSV.swift: UTF-8 with or without a byte-order mark, `,` `;` or
/// tab separated, quoted fields with embedded separators, quotes and line breaks. Each record
/// keeps the line of the file it starts on, so errors can name it.
struct StatementFile {
    struct Record {
        let line: Int
        let fields: [String]
        /// BLAKE2b-128 of the raw fields and of how many identical records came before it in
        /// this file: re-importing the file finds every row again, while two identical rows
        /// (two coffees on one day) stay two.
        let digest: [UInt8]
    }

    let delimiter: Character
    /// The header's column titles; empty without a header row.
    let titles: [String]
    let records: [Record]

    enum Separator: String, CaseIterable {
        case comma = ",", semicolon = ";", tab = "\t"
    }

    init(data: Data, name: String, delimiter: Character?, skipLines: Int, hasHeader: Bool) throws {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError(.invalidInput, "\(name) is not UTF-8 text. Nothing was imported.",
                           hint: "Convert it first, e.g. iconv -f WINDOWS-1252 -t UTF-8 \(name) > statement-utf8.csv")
        }
        guard !text.contains("\0") else { throw CLIError(.invalidInput, "\(name) is not a CSV file (it holds binary data). Nothing was imported.") }
        let separator = delimiter ?? Self.guessDelimiter(text, skipLines: skipLines)
        self.delimiter = separator

        let reader: CSVReader
        do {
            reader = try CSVReader(string: text, hasHeaderRow: false, trimFields: false, delimiter: separator.unicodeScalars.first!)
        } catch {
            throw CLIError(.invalidInput, "\(name) cannot be read as CSV. Nothing was imported.")
        }
        var records: [Record] = []
        var titles: [String]?
        var seen: [[UInt8]: Int] = [:]
        var line = 1
        while let fields = reader.next() {
            let start = line
            // A record spans one line plus every line break inside its quoted fields.
            line += 1 + fields.reduce(0) { $0 + $1.reduce(0) { $0 + ($1.isNewline ? 1 : 0) } }
            guard start > skipLines, !fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) else { continue }
            if hasHeader && titles == nil {
                titles = fields
                continue
            }
            var content: [UInt8] = []
            for field in fields {
                let value = Array(field.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
                withUnsafeBytes(of: UInt32(value.count).littleEndian) { content.append(contentsOf: $0) }
                content.append(contentsOf: value)
            }
            let occurrence = seen[content, default: 0]
            seen[content] = occurrence + 1
            withUnsafeBytes(of: UInt32(occurrence).littleEndian) { content.append(contentsOf: $0) }
            records.append(Record(line: start, fields: fields, digest: BLAKE2b.hash(content, outputByteCount: 16)))
        }
        // An unclosed quote makes CSV.swift read the rest of the file into the last field.
        if let last = records.last, last.fields.last?.contains(where: \.isNewline) == true,
           !text.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("\"") {
            throw CLIError(.invalidInput, "line \(last.line): a quoted field is never closed. Nothing was imported.")
        }
        guard !records.isEmpty || titles != nil else { throw CLIError(.invalidInput, "\(name) holds no lines to import. Nothing was imported.") }
        self.titles = titles ?? []
        self.records = records
    }

    /// The separator used most on the first line that has any, outside quotes; a comma when
    /// none is. `--delimiter` overrides it.
    static func guessDelimiter(_ text: String, skipLines: Int) -> Character {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).dropFirst(skipLines)
        for line in lines where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            var counts: [Character: Int] = [:]
            var quoted = false
            for character in line {
                if character == "\"" { quoted.toggle() } else if !quoted, ",;\t".contains(character) { counts[character, default: 0] += 1 }
            }
            guard let best = counts.max(by: { ($0.value, $0.key == "," ? 1 : 0) < ($1.value, $1.key == "," ? 1 : 0) }) else { continue }
            return best.key
        }
        return ","
    }

    /// A column given as a 1-based number or a header title (case-insensitive).
    func column(_ spec: String, flag: String) throws -> Int {
        let trimmed = spec.trimmingCharacters(in: .whitespaces)
        if let number = Int(trimmed) {
            guard number >= 1 else { throw CLIError(.invalidInput, "--\(flag) \(spec): columns are numbered from 1. Nothing was imported.") }
            return number - 1
        }
        guard !titles.isEmpty else {
            throw CLIError(.invalidInput, "--\(flag) '\(spec)': the file has no header row, so give the column's number. Nothing was imported.")
        }
        guard let index = titles.firstIndex(where: { Self.normalised($0) == Self.normalised(trimmed) }) else {
            throw CLIError(.invalidInput, "--\(flag) '\(spec)': no column has that title. Nothing was imported.",
                           hint: "The columns are: \(describeTitles())")
        }
        return index
    }

    /// The first column whose title is one of `candidates` (in the order given).
    func guessColumn(_ candidates: [String]) -> Int? {
        for candidate in candidates {
            if let index = titles.firstIndex(where: { Self.normalised($0) == candidate }) { return index }
        }
        return nil
    }

    func describeTitles() -> String {
        titles.enumerated().map { "\($0.offset + 1) \"\($0.element.trimmingCharacters(in: .whitespaces))\"" }.joined(separator: ", ")
    }

    static func normalised(_ title: String) -> String {
        title.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}

/// Fuzzing's way in to the statement importer: what `coffer import csv` does with a file before
/// it opens the vault, under one of a few option sets chosen by the first byte.
@_spi(Fuzzing) public func fuzzStatementImport(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let command = fuzzingOptionSets[Int(first) % fuzzingOptionSets.count]
    guard let statement = try? StatementFile(data: Data(bytes.dropFirst()), name: "input", delimiter: nil, skipLines: command.skipRows, hasHeader: !command.noHeader),
          let layout = try? command.layout(for: statement) else { return }
    for record in statement.records {
        _ = try? layout.row(record.fields, line: record.line, rowHash: record.digest, currency: .gbp)
    }
}

/// Parsed once: argument parsing is far slower than the parsing under test.
private let fuzzingOptionSets: [CSVStatement] = [
    ["--into", "transactions"], ["--into", "updates", "--account", "A"], ["--into", "transactions", "--decimal-comma", "--date-format", "DD/MM/YYYY"],
    ["--into", "transactions", "--no-header", "--date-column", "1", "--amount-column", "2"], ["--into", "transactions", "--date-format", "%e %b %Y", "--skip-rows", "1"],
].map { try! CSVStatement.parse(["input"] + $0) }
