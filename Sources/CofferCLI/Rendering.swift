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
        return Style(color: color, width: max(40, min(columns, 120)))
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
    /// Columns padded to their widest cell; `rightAligned` columns (amounts) align on the right
    /// so digits line up.
    static func table(_ rows: [[String]], rightAligned: Set<Int> = [], indent: String = "  ") -> [String] {
        guard let columns = rows.map(\.count).max() else { return [] }
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            indent
                + row.enumerated().map { column, cell in
                    let padding = String(repeating: " ", count: widths[column] - cell.count)
                    return rightAligned.contains(column) ? padding + cell : cell + padding
                }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }

    /// 45.3 (a JSON number, exact) from tenths of a percent.
    static func percentNumber(perMille: Int) -> Decimal { Decimal(perMille) / 10 }

    /// "45.3%" from tenths of a percent.
    static func percent(perMille: Int) -> String { "\(perMille / 10).\(abs(perMille % 10))%" }

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

    static func truncated(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(1, width - 1))) + "…"
    }
}
