import ArgumentParser
import CofferKit
import Foundation
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// `coffer shell` and `coffer batch`: many commands for one unlock, typed (or piped) after the
/// program has started, so names and amounts never land in shell history or in
/// `/proc/PID/cmdline`, which every local user can read.
struct Shell: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract:
            "A prompt that unlocks once and takes commands without `coffer`; nothing typed reaches shell history.",
        discussion: """
            Type any command as you would after `coffer` (spend 12.50 Groceries, update Home 250000, budget). \
            The vault stays open, so each answers at once. At a terminal, lines can be edited (arrows, \
            Ctrl-A/E/W/U, Ctrl-R) and recalled with the up arrow; Tab completes commands and the names of \
            accounts, categories, goals, income sources and clients. That history lives in memory only \
            and goes when the shell ends: nothing typed is written to disk. Leave with exit, quit, Ctrl-D, \
            or after --timeout without input (also in the middle of a line).
            """)
    @OptionGroup var options: VaultOptions
    @Option(help: ArgumentHelp("Leave after this long without input (for example 10m, 1h).", valueName: "duration"))
    var timeout: String = "15m"

    func run() throws {
        let idle = try Duration.parse(timeout)
        let ledger = try options.openLedger()
        CommandSession.open(ledger, at: options.vaultURL)
        defer { CommandSession.close() }
        let name = VaultOptions.display(options.vaultURL)
        Terminal.note("Unlocked \(name). Type a command (help lists them, Tab completes); exit or Ctrl-D leaves.")
        if Terminal.standardInputIsTerminal, Terminal.standardErrorIsTerminal,
            let editor = LineEditor(
                idle: idle, completer: { ShellCompletion.candidates(before: $0, partial: $1, ledger: ledger) })
        {
            while true {
                guard let line = editor.readLine() else {
                    Terminal.note(
                        editor.timedOut ? "\nNo input for \(Duration.format(idle)): the vault is closed." : "")
                    return
                }
                guard Self.runs(line) else { return }
            }
        }
        while true {
            Terminal.writeError("coffer> ")
            guard CommandSession.inputArrives(within: idle) else {
                Terminal.note("\nNo input for \(Duration.format(idle)): the vault is closed.")
                return
            }
            guard let line = readLine(strippingNewline: true) else {
                Terminal.note("")
                return
            }
            guard Self.runs(line) else { return }
        }
    }

    /// Runs one typed line; false when it asks to leave.
    private static func runs(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return true }
        if trimmed == "exit" || trimmed == "quit" { return false }
        _ = CommandSession.run(line: line)
        return true
    }
}

/// What Tab offers in `coffer shell`: command words from the command definitions, then the
/// names the command takes, from the open vault.
enum ShellCompletion {
    static func candidates(before: [String], partial: String, ledger: Ledger) -> [String] {
        var command: ParsableCommand.Type = Coffer.self
        var path: [String] = []
        for word in before {
            guard let next = GlobalOptionPlacement.subcommand(of: command, named: word) else { break }
            command = next
            path.append(word)
        }
        let subcommands = command.configuration.subcommands.map { $0.configuration.commandName ?? $0._commandName }
        if path.count == before.count, !subcommands.isEmpty {
            return subcommands.filter { !CommandSession.refused.contains($0) } + (path.isEmpty ? ["exit", "quit"] : [])
        }
        let accounts = ledger.accounts.map(\.name)
        let categories = ledger.budgetCategories.filter { !$0.isHidden }.map(\.name)
        let goals = ledger.goals.map(\.name)
        let sources = ledger.incomeSources.map(\.name)
        let clients = ledger.clients.map(\.name)
        switch path.first {
        case "update", "account", "growth": return accounts
        case "spend", "category": return categories
        case "save", "goal": return goals
        case "earn", "income": return sources
        case "client", "invoices": return clients
        case "invoice": return clients + ledger.invoices.map(\.reference)
        default: return accounts + categories + goals + sources + clients
        }
    }
}

struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Run commands from standard input, one per line without `coffer`, for one unlock: for scripts.",
        discussion: """
            Blank lines and lines starting with # are skipped. It stops at the first command that fails and \
            exits with that command's code (the lines before it stay done); --keep-going runs the rest and \
            exits with the first failure's code. The passphrase comes from a session, COFFER_PASSPHRASE, \
            --passphrase-file or --passphrase-command: standard input carries the commands.
            """)
    @OptionGroup var options: VaultOptions
    @Flag(help: "Run every line even after one fails.") var keepGoing = false

    func run() throws {
        let ledger = try options.openLedger()
        CommandSession.open(ledger, at: options.vaultURL)
        defer { CommandSession.close() }
        var firstFailure: Int32 = 0
        var number = 0
        while let line = readLine(strippingNewline: true) {
            number += 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let status = CommandSession.run(line: line)
            guard status != 0 else { continue }
            if firstFailure == 0 { firstFailure = status }
            if !keepGoing {
                Terminal.note("hint: stopped at line \(number); the lines before it were done.")
                break
            }
            Terminal.note("hint: line \(number) failed; going on (--keep-going).")
        }
        if firstFailure != 0 { throw ExitCode(firstFailure) }
    }
}

/// The vault a shell or batch keeps open, and how each line inside it runs.
enum CommandSession {
    nonisolated(unsafe) private static var current: (path: String, ledger: Ledger)?

    static func open(_ ledger: Ledger, at url: URL) {
        current = (url.standardizedFileURL.path, ledger)
    }

    static func close() { current = nil }

    /// The open vault, when `url` is it: commands inside a shell or batch use it rather than
    /// opening (and unlocking) the file again.
    static func ledger(at url: URL) -> Ledger? {
        guard let current, current.path == url.standardizedFileURL.path else { return nil }
        return current.ledger
    }

    /// Commands that replace the vault's keys or files, or open another shell or a server: run
    /// them outside.
    static let refused: Set<String> = [
        "shell", "batch", "init", "demo", "unlock", "lock", "rekey", "passphrase", "recovery-key", "restore",
        "device", "merge", "upgrade", "web",
    ]

    /// Advice and hints as they are typed inside a shell or batch, where commands take no
    /// `coffer` word: `Undo with: coffer undo` reads `Undo with: undo`. Only a command the shell
    /// runs loses the word; one it refuses (`coffer rekey`: leave and run it) and a path such as
    /// `~/.local/share/coffer/vault.coffer` keep it. Outside a shell the text is as given.
    static func asTypedHere(_ text: String) -> String {
        guard current != nil else { return text }
        let commands = Set(Coffer.configuration.subcommands.map { $0.configuration.commandName ?? $0._commandName })
            .union(["help"])
        var result = ""
        var rest = Substring(text)
        while let found = rest.range(of: "coffer ") {
            let before = rest[..<found.lowerBound]
            let previous = before.last ?? result.last
            let startsWord = previous.map { " `('\"".contains($0) } ?? true
            let words = rest[found.upperBound...].prefix { $0 != "·" && $0 != "`" }.split(separator: " ").map(
                String.init)
            let runsHere = words.first.map(commands.contains) == true && refusal(of: words) == nil
            result += before + (startsWord && runsHere ? "" : "coffer ")
            rest = rest[found.upperBound...]
        }
        return result + rest
    }

    /// The command `words` name when the shell refuses it (`rekey`, `sync compact`); nil when it runs here.
    private static func refusal(of words: [String]) -> String? {
        guard let first = words.first(where: { !$0.hasPrefix("-") }) else { return nil }
        if refused.contains(first) { return first }
        return first == "sync" && words.contains("compact") ? "sync compact" : nil
    }

    /// Runs one line as `coffer WORDS`; reports its error in the usual style and returns its
    /// exit status (the process goes on).
    static func run(line: String) -> Int32 {
        do {
            var words = try self.words(line)
            if words.first == "coffer" { words.removeFirst() }
            if let command = refusal(of: words) {
                throw CLIError(
                    .invalidInput, "'\(command)' is not available inside a shell or batch.",
                    hint: "Leave it (exit) and run: coffer \(command) …")
            }
            return Coffer.execute(words)
        } catch {
            return Coffer.report(CLIError(error))
        }
    }

    /// Splits a line into words as a POSIX shell does for a simple command: blanks separate;
    /// 'single quotes' keep everything; "double quotes" keep all but \" \\ \$ \`; a backslash
    /// outside quotes keeps the next character. No expansion of any kind.
    static func words(_ line: String) throws -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            switch character {
            case " ", "\t":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                guard let end = characters.firstIndex(of: "'") else {
                    throw CLIError(.invalidInput, "A ' quote is not closed.", hint: "Close it, or escape it as \\'.")
                }
                word += String(characters[..<end])
                characters = characters[(end + 1)...]
            case "\"":
                inWord = true
                var closed = false
                while let next = characters.popFirst() {
                    if next == "\"" {
                        closed = true
                        break
                    }
                    if next == "\\", let escaped = characters.first, "\"\\$`".contains(escaped) {
                        word.append(escaped)
                        characters.removeFirst()
                    } else {
                        word.append(next)
                    }
                }
                guard closed else {
                    throw CLIError(
                        .invalidInput, "A \" quote is not closed.", hint: "Close it, or escape it as \\\".")
                }
            case "\\":
                inWord = true
                if let next = characters.popFirst() { word.append(next) }
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// Waits for input on standard input for at most `seconds`.
    static func inputArrives(within seconds: TimeInterval) -> Bool {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: Int((seconds * 1000).rounded()))
        while true {
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            return ready != 0
        }
    }
}
