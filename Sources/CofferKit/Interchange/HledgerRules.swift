import FinanceCore
import Foundation

/// An hledger CSV rules file (hledger_csv(5)), read as hledger reads it, for the subset that
/// describes a bank statement and places its lines:
///
/// - `skip [N]`, `fields NAME, NAME, …`, `separator`, `date-format`, `decimal-mark`, `encoding`,
///   `currency`, `newest-first` and `intra-day-reversed` (Coffer finds the order itself);
/// - field assignments of `description` (with `%N` / `%name` interpolation), `account1` (the
///   statement's account label) and `account2` (where the line goes), and of `date`, `amount`,
///   `amount-in`, `amount-out`, `currency` and `balance` when they name one field (`amount %4`);
///   `comment`, `status`, `code` and `date2` are read and ignored (Coffer's transactions have no
///   such parts);
/// - `if` blocks of record matchers (`REGEX`, tried on the fields joined by commas) and field
///   matchers (`%field REGEX`), case-insensitive, OR'd one per line, AND'ed with a leading `&`,
///   whose indented rules are field assignments, `skip` or `end`. As in hledger, every block that
///   matches applies, in file order, so a later assignment wins.
///
/// Everything else (`include`, `balance-type`, `timezone`, if tables, …) is refused by name
/// with its line: a rules file half understood would place money wrongly.
public struct HledgerRules: Sendable {
    struct Matcher: Sendable {
        /// The field (a name or a 1-based number) it reads; nil for the whole record.
        let field: String?
        let pattern: String
        /// AND'ed with the matcher before it (`&`), instead of OR'ed.
        let joined: Bool
    }

    struct Block: Sendable {
        let line: Int
        var matchers: [Matcher] = []
        var assignments: [(field: String, value: String)] = []
        var skips = false
        var ends = false
    }

    /// Field names, by column (empty: unnamed).
    public private(set) var fields: [String] = []
    public private(set) var skip = 0
    public private(set) var separator: String?
    public private(set) var dateFormat: String?
    public private(set) var decimalComma = false
    public private(set) var encoding: StatementFile.Encoding?
    public private(set) var currency: String?
    var assignments: [(field: String, value: String)] = []
    var blocks: [Block] = []

    /// Field names hledger gives a meaning Coffer has no place for: read and ignored.
    static let ignoredFields = ["date2", "status", "code", "comment", "comment1", "comment2"]
    static let assignable = ["description", "account1", "account2"] + ignoredFields

    public init(_ text: String) throws {
        var current: Block?
        func refuse(_ line: Int, _ message: String) -> CofferError {
            CofferError(.invalidInput, "line \(line) of the rules file: \(message)")
        }
        func finish() throws {
            guard let block = current else { return }
            guard !block.matchers.isEmpty else { throw refuse(block.line, "'if' needs a pattern.") }
            guard !block.assignments.isEmpty || block.skips || block.ends else {
                throw refuse(block.line, "this 'if' block has no indented rules.")
            }
            blocks.append(block)
            current = nil
        }
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = String(raw.hasSuffix("\r") ? raw.dropLast() : raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                try finish()
                continue
            }
            if trimmed.hasPrefix("#") || trimmed.hasPrefix(";") || trimmed.hasPrefix("*") { continue }
            let indented = line.first?.isWhitespace == true
            if var block = current {
                if indented {
                    let (name, value) = Self.split(trimmed)
                    switch name {
                    case "skip": block.skips = true
                    case "end": block.ends = true
                    case _ where Self.assignable.contains(name):
                        guard name != "account1" else {
                            throw refuse(number, "'account1' inside an 'if' block: a statement is one account's.")
                        }
                        block.assignments.append((name, value))
                    default:
                        throw refuse(number, "'\(name)' inside an 'if' block is not something Coffer reads.")
                    }
                    current = block
                    continue
                }
                if block.assignments.isEmpty && !block.skips && !block.ends {
                    block.matchers.append(try Self.matcher(trimmed, line: number))
                    current = block
                    continue
                }
                try finish()
            }
            // An if table is `if` then its separator at once: `if,account2,comment`.
            if trimmed.lowercased().hasPrefix("if"), let next = trimmed.dropFirst(2).first,
                !next.isLetter && !next.isNumber && !next.isWhitespace
            {
                throw refuse(number, "'if' tables are not something Coffer reads; write them as 'if' blocks.")
            }
            let (name, value) = Self.split(trimmed)
            switch name {
            case "if":
                current = Block(line: number)
                if !value.isEmpty { current!.matchers.append(try Self.matcher(value, line: number)) }
            case "skip":
                guard value.isEmpty || Int(value) != nil, (Int(value) ?? 1) >= 0 else {
                    throw refuse(number, "'skip' takes a number of lines.")
                }
                skip = Int(value) ?? 1
            case "fields":
                fields = value.split(separator: ",", omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                }
                guard fields.count >= 2 else { throw refuse(number, "'fields' names at least two fields.") }
            case "separator":
                separator = value.isEmpty ? nil : value
                guard let separator,
                    ["\t", "tab", "\\t", ",", "comma", ";", "semicolon"].contains(separator.lowercased())
                else { throw refuse(number, "the separator is one of , ; or TAB.") }
            case "date-format":
                _ = try DatePattern(value)
                dateFormat = value
            case "decimal-mark":
                guard value == "," || value == "." else { throw refuse(number, "the decimal mark is , or .") }
                decimalComma = value == ","
            case "encoding":
                switch value.lowercased() {
                case "utf-8", "utf8", "ascii": encoding = .utf8
                case "iso-8859-1", "latin1", "latin-1", "iso8859-1": encoding = .latin1
                case "cp1252", "windows-1252": encoding = .cp1252
                default: throw refuse(number, "encoding '\(value)' is not utf-8, iso-8859-1 or windows-1252.")
                }
            case "currency":
                currency = value
            case "newest-first", "intra-day-reversed":
                continue
            case "date", "amount", "amount1", "amount-in", "amount-out", "amount1-in", "amount1-out", "balance",
                "balance1":
                guard let column = Self.reference(value) else {
                    throw refuse(number, "Coffer reads '\(name)' only as one field, such as '\(name) %3'.")
                }
                assignments.append((name, "%" + column))
            case _ where Self.assignable.contains(name):
                assignments.append((name, value))
            default:
                throw refuse(number, "'\(name)' is not something Coffer reads.")
            }
        }
        try finish()
        guard !fields.isEmpty else {
            throw CofferError(
                .invalidInput, "The rules file has no 'fields' line: Coffer needs it to find the columns.")
        }
        guard column(for: ["date"]) != nil else {
            throw CofferError(.invalidInput, "The rules file does not say which field is the date.")
        }
        guard
            column(for: ["amount", "amount1"]) != nil
                || (column(for: ["amount-in", "amount1-in"]) != nil
                    && column(for: ["amount-out", "amount1-out"]) != nil)
        else {
            throw CofferError(.invalidInput, "The rules file does not say which field is the amount.")
        }
    }

    /// A directive's name and the rest of its line.
    static func split(_ line: String) -> (String, String) {
        guard let space = line.firstIndex(where: \.isWhitespace) else { return (line.lowercased(), "") }
        return (line[..<space].lowercased(), line[space...].trimmingCharacters(in: .whitespaces))
    }

    /// `%4` or `%name` alone, as a column reference.
    static func reference(_ value: String) -> String? {
        guard value.hasPrefix("%"), value.count > 1,
            value.dropFirst().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
        else { return nil }
        return String(value.dropFirst()).lowercased()
    }

    static func matcher(_ text: String, line: Int) throws -> Matcher {
        var rest = Substring(text)
        let joined = rest.hasPrefix("&")
        if joined { rest = rest.dropFirst().drop { $0.isWhitespace } }
        var field: String?
        if rest.hasPrefix("%"), let space = rest.firstIndex(where: \.isWhitespace) {
            field = String(rest[rest.index(after: rest.startIndex)..<space]).lowercased()
            rest = rest[space...].drop { $0.isWhitespace }
        }
        let pattern = String(rest)
        do {
            _ = try Regex(pattern)
        } catch {
            throw CofferError(
                .invalidInput,
                "line \(line) of the rules file: '\(pattern)' is not a regular expression Coffer can read.")
        }
        return Matcher(field: field, pattern: pattern, joined: joined)
    }

    /// The 0-based column a field name (or number) stands for, the first of `names` that has one.
    func column(for names: [String]) -> Int? {
        for name in names {
            if let index = fields.firstIndex(of: name) { return index }
            if let assigned = assignments.last(where: { $0.field == name }),
                let reference = Self.reference(assigned.value)
            {
                return columnIndex(reference)
            }
        }
        return nil
    }

    func columnIndex(_ reference: String) -> Int? {
        if let number = Int(reference) { return number >= 1 ? number - 1 : nil }
        return fields.firstIndex(of: reference)
    }

    /// The column hledger's `currency` field names, if any.
    public var currencyColumn: Int? { column(for: ["currency"]) }

    /// The statement settings the rules give, as an import profile (columns by number).
    public var profile: ImportProfile {
        var profile = ImportProfile(name: "")
        profile.destination = .transactions
        func number(_ names: String...) -> String? { column(for: names).map { String($0 + 1) } }
        profile.dateColumn = number("date")
        profile.amountColumn = number("amount", "amount1")
        if profile.amountColumn == nil {
            profile.debitColumn = number("amount-out", "amount1-out")
            profile.creditColumn = number("amount-in", "amount1-in")
        }
        profile.balanceColumn = number("balance", "balance1")
        profile.dateFormat = dateFormat
        profile.decimalComma = decimalComma
        profile.noHeader = true
        profile.skipRows = skip
        profile.delimiter = separator
        profile.encoding = encoding ?? .utf8
        profile.account = assignments.last { $0.field == "account1" }?.value
        return profile
    }

    /// What the rules say about one record: its description and `account2`, or that it is
    /// skipped (`skip`), or that it and every later one are (`end`).
    public enum Outcome: Sendable, Equatable {
        case keep(description: String?, account: String?)
        case skip
        case end
    }

    /// The matchers compiled once, for placing many records.
    public func reader() -> @Sendable ([String]) -> Outcome {
        nonisolated(unsafe) let compiled = blocks.map { block in
            (block, block.matchers.map { (try? Regex($0.pattern).ignoresCase()) })
        }
        let rules = self
        return { fields in
            let record = fields.joined(separator: ",")
            var values: [String: String] = [:]
            for (index, name) in rules.fields.enumerated() where index < fields.count && !name.isEmpty {
                values[name] = fields[index].trimmingCharacters(in: .whitespaces)
            }
            for (field, value) in rules.assignments { values[field] = rules.interpolate(value, fields: fields) }
            for (block, regexes) in compiled {
                // OR of AND groups: each `&` joins the matcher to the group before it.
                var groups: [[Bool]] = []
                for (matcher, regex) in zip(block.matchers, regexes) {
                    let subject =
                        matcher.field.map { field in
                            rules.columnIndex(field).map { $0 < fields.count ? fields[$0] : "" } ?? ""
                        } ?? record
                    let hit = regex.map { (try? $0.firstMatch(in: subject)) != nil } ?? false
                    if matcher.joined, !groups.isEmpty {
                        groups[groups.count - 1].append(hit)
                    } else {
                        groups.append([hit])
                    }
                }
                guard groups.contains(where: { $0.allSatisfy { $0 } }) else { continue }
                if block.ends { return .end }
                if block.skips { return .skip }
                for (field, value) in block.assignments { values[field] = rules.interpolate(value, fields: fields) }
            }
            let description = values["description"].map {
                $0.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            }
            return .keep(description: description, account: values["account2"])
        }
    }

    /// `value` with each `%N` and `%name` replaced by that field, trimmed (as hledger does).
    func interpolate(_ value: String, fields values: [String]) -> String {
        var result = ""
        var rest = Substring(value)
        while let percent = rest.firstIndex(of: "%") {
            result += rest[..<percent]
            let after = rest[rest.index(after: percent)...]
            let name = after.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            if !name.isEmpty, let index = columnIndex(name.lowercased()) {
                result += index < values.count ? values[index].trimmingCharacters(in: .whitespaces) : ""
                rest = after.dropFirst(name.count)
            } else {
                result += "%"
                rest = after
            }
        }
        return result + rest
    }
}
