import Foundation

/// Charts in the terminal, drawn with Unicode block characters. They are a view for the eyes
/// only: every chart is printed above the table that states its numbers, and a caption says in
/// words what it shows, so no meaning rests on a shape or a colour. Into a pipe, under
/// `NO_COLOR` or with `--no-chart` only the tables are printed.
enum Chart {
    static func drawn(json: Bool, plain: Bool, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Bool
    {
        !json && !plain && Terminal.standardOutputIsTerminal && (environment["NO_COLOR"] ?? "").isEmpty
            && environment["TERM"] != "dumb"
    }

    static let eighths = Array(" ▁▂▃▄▅▆▇█")

    /// An area chart of `values` (one column group per value, left to right), `height` rows high,
    /// with the top and bottom of the y axis labelled by `axis` and the first and last values'
    /// `labels` under the x axis. The area rises from the lowest value, so changes show.
    static func area(_ values: [Int64], labels: [String], axis: (Int64) -> String, height: Int = 8, width: Int)
        -> [String]
    {
        guard let low = values.min(), let high = values.max(), !values.isEmpty else { return [] }
        let top = axis(high), bottom = axis(low)
        let gutter = max(DisplayWidth.of(top), DisplayWidth.of(bottom)) + 1
        let available = max(values.count, width - gutter - 2)
        let columnWidth = max(1, min(4, available / values.count))
        let span = Double(high - low)
        let levels = values.map { value -> Int in
            // Eighths of a row; the lowest value still shows one eighth, so no month is blank.
            span == 0 ? height * 4 : max(1, Int((Double(value - low) / span * Double(height * 8)).rounded()))
        }
        var lines: [String] = []
        for row in 0..<height {
            let floor = (height - 1 - row) * 8
            let label = row == 0 ? top : (row == height - 1 ? bottom : "")
            let cells = levels.map { level in
                String(repeating: String(eighths[max(0, min(8, level - floor))]), count: columnWidth)
            }.joined()
            lines.append(padded(label, to: gutter - 1) + " │" + cells)
        }
        let plotWidth = columnWidth * values.count
        lines.append(String(repeating: " ", count: gutter) + "└" + String(repeating: "─", count: plotWidth))
        if let first = labels.first, let last = labels.last {
            let room = plotWidth - DisplayWidth.of(first) - DisplayWidth.of(last)
            lines.append(
                String(repeating: " ", count: gutter + 1)
                    + (room >= 1 ? first + String(repeating: " ", count: room) + last : first))
        }
        return lines
    }

    /// Horizontal bars, one a row: the label, a bar in proportion to the largest value (to an
    /// eighth of a cell), then the value in words. Values below zero draw no bar.
    static func bars(_ rows: [(label: String, value: Int64, text: String)], width: Int) -> [String] {
        guard let largest = rows.map(\.value).max(), largest > 0 else {
            return rows.map { "\($0.label)  \($0.text)" }
        }
        let labelWidth = rows.map { DisplayWidth.of($0.label) }.max() ?? 0
        let textWidth = rows.map { DisplayWidth.of($0.text) }.max() ?? 0
        let barWidth = max(4, min(40, width - labelWidth - textWidth - 4))
        return rows.map { row in
            let eighthsLong =
                row.value <= 0 ? 0 : Int((Double(row.value) / Double(largest) * Double(barWidth * 8)).rounded())
            let bar =
                String(repeating: "█", count: eighthsLong / 8)
                + (eighthsLong % 8 == 0 ? "" : String(Array(" ▏▎▍▌▋▊▉")[eighthsLong % 8]))
            return padded(row.label, to: labelWidth) + "  " + padded(bar, to: barWidth) + "  " + row.text
        }
    }

    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - DisplayWidth.of(text)))
    }
}
