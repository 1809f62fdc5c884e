import FinanceCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How human output looks: colour only as an extra (never the only carrier of meaning); width
/// from the terminal. Colour, first match wins: `--color=always|never`; `NO_COLOR` (none);
/// `CLICOLOR_FORCE` other than 0 (colour even into a pipe); the configuration file's `color`;
/// otherwise colour only when stdout is a terminal and TERM is not dumb (`auto`).
struct Style {
    let color: Bool
    let width: Int
    /// What tables and prose are fitted to: the terminal's width, or `COLUMNS` when set; a pipe
    /// without `COLUMNS` gets whole lines (a script reads every character).
    let fitWidth: Int

    enum ColorChoice: String, CaseIterable { case auto, always, never }

    /// `--color` as given on the command line (any command, anywhere before `--`).
    nonisolated(unsafe) static var choice = ColorChoice.auto

    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Style {
        let terminal = isatty(STDOUT_FILENO) == 1
        let color: Bool
        switch choice {
        case .always: color = true
        case .never: color = false
        case .auto:
            if !(environment["NO_COLOR"] ?? "").isEmpty {
                color = false
            } else if let force = environment["CLICOLOR_FORCE"], !force.isEmpty, force != "0" {
                color = true
            } else if let configured = Configuration.current.color, configured != .auto {
                color = configured == .always
            } else {
                color = terminal && environment["TERM"] != "dumb"
            }
        }
        var size = winsize()
        let columns =
            terminal && ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0
            ? Int(size.ws_col) : Int(environment["COLUMNS"] ?? "") ?? 80
        let fit =
            terminal ? Int(size.ws_col) : (Int(environment["COLUMNS"] ?? "").flatMap { $0 > 0 ? $0 : nil } ?? .max)
        return Style(color: color, width: max(40, min(columns, 120)), fitWidth: max(20, fit))
    }

    /// The only escape sequences Coffer writes; `Output` lets exactly these through.
    static let sequences = ["\u{1B}[1m", "\u{1B}[2m", "\u{1B}[31m", "\u{1B}[32m", "\u{1B}[0m"]

    func bold(_ text: String) -> String { color ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    func dim(_ text: String) -> String { color ? "\u{1B}[2m\(text)\u{1B}[0m" : text }

    /// A signed change, marked with an arrow word-free symbol and sign so it reads without colour.
    func change(_ text: String, negative: Bool, zero: Bool) -> String {
        let marked = zero ? "→ \(text)" : (negative ? "↓ \(text)" : "↑ +\(text)")
        guard color, !zero else { return marked }
        return "\u{1B}[\(negative ? 31 : 32)m\(marked)\u{1B}[0m"
    }
}

enum Render {
    /// Columns padded to their widest cell by display width (CJK and emoji take two cells);
    /// `rightAligned` columns (amounts) align on the right so digits line up. Fitted to `width`
    /// (the terminal's): first the `droppable` columns go, in the order given (details such as
    /// a date); then text columns are cut with `…` (the widest first, to no less than 6 cells);
    /// then text columns after the first are dropped from the right. Amounts are never cut or
    /// split, nor are the `whole` columns: an id or invoice number that a `Next:` hint asks the
    /// reader to type is no use cut to `INV-00…`.
    static func table(
        _ rows: [[String]], rightAligned: Set<Int> = [], droppable: [Int] = [], whole: Set<Int> = [],
        indent: String = "  ", width: Int = Style.current().fitWidth
    ) -> [String] {
        guard let columnCount = rows.map(\.count).max() else { return [] }
        var rows = rows.map { $0 + Array(repeating: "", count: columnCount - $0.count) }
        // Columns by their original index, so the droppable list stays meaningful as others go.
        var kept = Array(0..<columnCount)
        func widths() -> [Int] { kept.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 } }
        func total() -> Int { indent.count + widths().reduce(0, +) + 2 * max(0, kept.count - 1) }
        for column in droppable where total() > width { kept.removeAll { $0 == column } }
        while total() > width {
            let current = widths()
            let cuttable = kept.indices.filter { !rightAligned.contains(kept[$0]) && !whole.contains(kept[$0]) }
            let text = cuttable.filter { current[$0] > 6 }
            if let widest = text.max(by: { current[$0] < current[$1] }) {
                let target = max(6, current[widest] - (total() - width))
                for index in rows.indices {
                    rows[index][kept[widest]] = DisplayWidth.truncated(rows[index][kept[widest]], to: target)
                }
            } else if let last = cuttable.last(where: { $0 > 0 }) {
                kept.remove(at: last)
            } else {
                break
            }
        }
        let current = widths()
        return rows.map { row in
            indent
                + kept.enumerated().map { index, column in
                    let cell = row[column]
                    let padding = String(repeating: " ", count: current[index] - DisplayWidth.of(cell))
                    return rightAligned.contains(column) ? padding + cell : cell + padding
                }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }

    /// 45.3 (a JSON number, exact) from tenths of a percent.
    static func percentNumber(perMille: Int) -> Decimal { Decimal(perMille) / 10 }

    /// "45.3%" from tenths of a percent.
    static func percent(perMille: Int) -> String { PerMille.text(perMille) }

    /// A change as two cells, `+£649.63` and `+0.4%` (a rise marked +, a fall -; blank when there
    /// is nothing to compare with): the account list and the net worth report's accounts use it,
    /// with the change as it counts in net worth, so the two screens read alike.
    static func changeCells(_ change: Portfolio.Change?, currency: Currency) -> [String] {
        guard let change else { return ["", ""] }
        return [
            (change.amount.isNegative || change.amount == .zero ? "" : "+") + currency.format(change.amount),
            change.perMille.map { ($0 > 0 ? "+" : "") + percent(perMille: $0) } ?? "",
        ]
    }

    /// A bar of `width` cells filled in proportion; the percentage beside it carries the value.
    static func bar(perMille: Int, width: Int) -> String {
        let filled = Int((Double(max(0, min(perMille, 1000))) * Double(width) / 1000).rounded())
        return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    }

    /// ▁▂▃▄▅▆▇█ from the lowest to the highest value.
    static func sparkline(_ values: [Int64]) -> String {
        let blocks = Array("▁▂▃▄▅▆▇█")
        guard let low = values.min(), let high = values.max() else { return "" }
        guard high > low else { return String(repeating: blocks[3], count: values.count) }
        return String(values.map { blocks[Int((Double($0 - low) / Double(high - low) * 7).rounded())] })
    }

    static func truncated(_ text: String, to width: Int) -> String { DisplayWidth.truncated(text, to: width) }
}

/// A JSON field that is written as `null` when it has no value, rather than left out (what
/// Swift's synthesized encoding does for optionals): Specs/cli.md promises the key.
@propertyWrapper
struct NullEncoded<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
