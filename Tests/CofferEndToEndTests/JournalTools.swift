import CofferTestSupport
import Foundation

/// Whether the tests that run hledger and ledger can.
let journalToolsInstalled =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/ledger")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/hledger")

/// Running hledger and ledger over journals, and reading their reports.
extension Sandbox {
    /// Runs a program to its end; its status and its stdout and stderr together.
    func tool(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = directory.path("stdout-tool-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: output)
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: output, encoding: .utf8))
    }

    /// An hledger report (`is`, `bs`, `bal`) of one period as CSV rows: account (or `total`,
    /// `Net:`) and amount as Coffer's JSON writes it (`GBP 1250.50` or `£1,250.50` → `1250.50`, `0` → `0.00`).
    func hledgerReport(_ journal: URL, _ arguments: [String]) throws -> [(name: String, amount: String)] {
        let (status, output) = try tool("/usr/bin/hledger", ["-f", journal.path] + arguments + ["-O", "csv"])
        guard status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: ["output": output]) }
        return output.split(separator: "\n").compactMap { line in
            // hledger quotes every cell; amounts may hold commas.
            let cells = line.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).components(separatedBy: "\",\"")
            // A section with nothing in it ends in a total with no amount.
            if cells == ["total"] { return ("total", "0.00") }
            guard cells.count == 2, let first = cells[1].first, first == "G" || first == "£" || first == "0" else {
                return nil
            }
            let amount = cells[1].replacingOccurrences(of: "GBP ", with: "").filter { $0 != "£" && $0 != "," }
            return (cells[0], amount == "0" ? "0.00" : amount)
        }
    }
}

/// The JSON a coffer command printed.
func jsonObject(_ text: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
}

/// The day after the last of `month` (`YYYY-MM`): hledger's exclusive end date.
func monthAfter(_ month: String) -> String {
    let year = Int(month.prefix(4))!, number = Int(month.suffix(2))!
    return number == 12 ? String(format: "%04d-01-01", year + 1) : String(format: "%04d-%02d-01", year, number + 1)
}

/// The last day of `month` (`YYYY-MM`).
func monthEnd(_ month: String) -> String {
    let year = Int(month.prefix(4))!, number = Int(month.suffix(2))!
    let days = [
        31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
    ]
    return "\(month)-\(days[number - 1])"
}

/// Decimal strings' difference, as Coffer's JSON writes amounts (two decimals).
func minus(_ lhs: String, _ rhs: String) -> String {
    let cents = { (text: String) in Int((Double(text)! * 100).rounded()) }
    let difference = cents(lhs) - cents(rhs)
    return String(format: "%@%d.%02d", difference < 0 ? "-" : "", abs(difference) / 100, abs(difference) % 100)
}
