import ArgumentParser
import Foundation

/// Checks the command words of an invocation before ArgumentParser sees them, so that a typo
/// (`coffer spnd`, `coffer account lst`, `coffer help spnd`) is named, with the nearest command
/// suggested as git does, and exits 64, instead of falling into the default subcommand's usage
/// or printing the root help.
enum CommandWords {
    /// Commands whose amount is money moving one way: a minus sign is a mistake, not an option.
    static let positiveAmountCommands: Set<String> = ["spend", "earn", "save"]

    /// Throws a usage error for the first word that names no command where one is expected, or
    /// for a negative amount given to `spend`, `earn` or `save` (which ArgumentParser would read
    /// as an unknown option).
    static func check(_ arguments: [String], root: ParsableCommand.Type = Coffer.self) throws {
        try checkAmounts(arguments)
        try checkWords(arguments, root: root)
    }

    /// Commands whose amount may be negative (an overdrawn account): `update NAME -120.50`.
    static let signedAmountCommands: Set<String> = ["update"]

    /// Moves a negative amount given to `update` behind `--` at the end, where ArgumentParser
    /// reads it as the amount rather than as an unknown option. A word after an option that
    /// takes a value (`--note -5`) is that option's value and stays.
    static func passingNegativeAmounts(_ arguments: [String]) -> [String] {
        guard let command = arguments.first, signedAmountCommands.contains(command), !arguments.contains("--")
        else { return arguments }
        let flags: Set<String> = ["--yes", "--accept-rollback", "--recovery-key", "-q", "--quiet"]
        for index in arguments.indices.dropFirst() where isNegativeNumber(arguments[index]) {
            let previous = arguments[index - 1]
            guard !previous.hasPrefix("-") || previous.contains("=") || flags.contains(previous) else { continue }
            var moved = arguments
            let amount = moved.remove(at: index)
            return moved + ["--", amount]
        }
        return arguments
    }

    private static func isNegativeNumber(_ word: String) -> Bool {
        guard word.count > 1, word.hasPrefix("-") else { return false }
        let digits = word.dropFirst().drop { !$0.isNumber }
        return digits.first?.isNumber == true && word.dropFirst().count - digits.count <= 3
            && digits.allSatisfy { $0.isNumber || $0 == "." || $0 == "," }
    }

    private static func checkAmounts(_ arguments: [String]) throws {
        guard let command = arguments.first, positiveAmountCommands.contains(command),
            let negative = arguments.dropFirst().prefix { $0 != "--" }.first(where: { word in
                word.count > 1 && word.hasPrefix("-")
                    && Double(word.dropFirst().replacingOccurrences(of: ",", with: ".")) != nil
            })
        else { return }
        let amount = String(negative.dropFirst())
        throw CLIError(
            .invalidInput,
            "Amounts are positive: '\(negative)' cannot be \(command == "spend" ? "spent" : command == "earn" ? "earned" : "saved").",
            hint: command == "spend"
                ? "Spending is entered as it leaves: coffer spend \(amount) CATEGORY. Money that came back (a refund) is income: coffer earn \(amount) SOURCE, or correct the spending with coffer transaction edit."
                : "Enter it as a positive amount: coffer \(command) \(amount) …")
    }

    private static func checkWords(_ arguments: [String], root: ParsableCommand.Type) throws {
        var words = arguments
        let asksForHelp = words.first == "help"
        if asksForHelp { words.removeFirst() }
        var command = root
        var path = [root._commandName]
        var skipValue = false
        for word in words {
            // The vault options may stand before the command words (`coffer --vault V spnd`).
            if skipValue {
                skipValue = false
                continue
            }
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            if GlobalOptionPlacement.flagOptions.contains(word) || GlobalOptionPlacement.valueOptions.contains(name) {
                skipValue = !word.contains("=") && GlobalOptionPlacement.valueOptions.contains(name)
                continue
            }
            guard !word.hasPrefix("-") else { return }
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { return }
            if let next = subcommands.first(where: { names(of: $0).contains(word) }) {
                command = next
                path.append(word)
                continue
            }
            // A word the default subcommand takes as its own argument (`coffer sync DIR`) is
            // not a typo, unless it is one letter or two from a subcommand and names no file.
            let choices = subcommands.flatMap(names(of:))
            let nearest = closest(to: word, among: choices)
            if !asksForHelp, let fallback = command.configuration.defaultSubcommand,
                (try? fallback.parse([word])) != nil,
                nearest == nil || FileManager.default.fileExists(atPath: word)
            {
                return
            }
            let group = path.joined(separator: " ")
            throw CLIError(
                .invalidInput, "'\(word)' is not a \(group) command.",
                hint: nearest.map { "did you mean '\($0)'?" } ?? "See the commands with: \(group) --help")
        }
    }

    private static func names(of command: ParsableCommand.Type) -> [String] {
        [command._commandName] + command.configuration.aliases
    }

    /// The choice nearest to `word` that is near enough to be what was meant: within two edits
    /// (one for a word of four letters or fewer), or a word it starts.
    static func closest(to word: String, among choices: [String]) -> String? {
        let typed = word.lowercased()
        let allowed = typed.count <= 4 ? 1 : 2
        let scored = choices.map { ($0, distance(typed, $0)) }.filter { $0.1 <= allowed }
        if let best = scored.min(by: { ($0.1, $0.0) < ($1.1, $1.0) }) { return best.0 }
        let started = choices.filter { typed.count >= 3 && $0.hasPrefix(typed) }
        return started.count == 1 ? started[0] : nil
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    /// neighbouring letters each count one (`spnd` → `spend` 1, `lsit` → `list` 1).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
