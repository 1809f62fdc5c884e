import ArgumentParser

/// Lets the global vault options stand before the subcommand (`coffer --vault V init`), as
/// users of git, restic and borg expect, by moving them to just after the subcommand path,
/// where ArgumentParser reads them.
enum GlobalOptionPlacement {
    /// Options of `VaultOptions` that take a value.
    static let valueOptions: Set<String> = [
        "--vault", "--passphrase-file", "--passphrase-command", "--recovery-key-file",
    ]
    /// Flags of `VaultOptions` (no value).
    static let flagOptions: Set<String> = ["--accept-rollback", "--recovery-key"]

    /// Removes `-q`/`--quiet` wherever it stands before `--` (every command takes it: no advice
    /// on stderr), and says whether it was there.
    static func takeQuiet(from arguments: inout [String]) -> Bool {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        let found = arguments[..<end].contains { $0 == "-q" || $0 == "--quiet" }
        if found {
            arguments = arguments[..<end].filter { $0 != "-q" && $0 != "--quiet" } + arguments[end...]
        }
        return found
    }

    /// Removes `--color=WHEN` or `--color WHEN` wherever it stands before `--` (every command
    /// takes it) and returns WHEN, refusing anything but auto, always and never.
    static func takeColor(from arguments: inout [String]) throws -> Style.ColorChoice? {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var choice: Style.ColorChoice?
        var index = 0
        var kept: [String] = []
        while index < end {
            let argument = arguments[index]
            let value: String
            if argument == "--color" {
                guard index + 1 < end else {
                    throw CLIError(.invalidInput, "--color needs a value: auto, always or never.")
                }
                value = arguments[index + 1]
                index += 2
            } else if argument.hasPrefix("--color=") {
                value = String(argument.dropFirst("--color=".count))
                index += 1
            } else {
                kept.append(argument)
                index += 1
                continue
            }
            guard let parsed = Style.ColorChoice(rawValue: value) else {
                throw CLIError(
                    .invalidInput, "--color takes auto, always or never, not '\(value)'.",
                    hint: "auto (the default) colours only a terminal; NO_COLOR and CLICOLOR_FORCE are read too.")
            }
            choice = parsed
        }
        arguments = kept + arguments[end...]
        return choice
    }

    static func normalise(_ arguments: [String], root: ParsableCommand.Type = Coffer.self) -> [String] {
        var hoisted: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if flagOptions.contains(argument) {
                hoisted.append(argument)
                index += 1
                continue
            }
            guard valueOptions.contains(name) else { break }
            if argument.contains("=") {
                hoisted.append(argument)
                index += 1
            } else {
                guard index + 1 < arguments.count else { return arguments }  // let the parser report it
                hoisted += [argument, arguments[index + 1]]
                index += 2
            }
        }
        guard !hoisted.isEmpty else { return arguments }
        var rest = Array(arguments[index...])
        var command = root
        var pathLength = 0
        while pathLength < rest.count, let next = subcommand(of: command, named: rest[pathLength]) {
            command = next
            pathLength += 1
        }
        rest.insert(contentsOf: hoisted, at: pathLength)
        return rest
    }

    static func subcommand(of command: ParsableCommand.Type, named name: String) -> ParsableCommand.Type? {
        command.configuration.subcommands.first { ($0.configuration.commandName ?? $0._commandName) == name }
    }
}
