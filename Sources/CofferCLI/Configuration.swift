import FinanceCore
import Foundation
import TOMLKit

#if canImport(Glibc)
    import Glibc
#endif

/// Defaults a person sets once, in `$COFFER_CONFIG`, else `$XDG_CONFIG_HOME/coffer/config.toml`
/// (`~/.config/coffer/config.toml`). A flag beats an environment variable, which beats the
/// file. Unknown keys and wrong types are refused (exit 78), so a typo never silently does
/// nothing; and since `passphrase_command` runs a program, a file others can write is refused
/// as ssh refuses such a config.
struct Configuration: Equatable {
    var vault: String?
    var passphraseCommand: String?
    var color: Style.ColorChoice?
    /// `coffer unlock --timeout` and `--max-age` defaults, already checked as durations.
    var sessionTimeout: String?
    var sessionMaxAge: String?
    /// Backed up by `backup create` besides the vault's saved targets, when no `--to` is given.
    var backupTargets: [String] = []
    /// The month `coffer report year` starts in (1 calendar years, 4 UK tax years).
    var yearStartMonth: Int?

    /// The keys the file may hold, as `table.key`, for the error that names a typo's nearest.
    static let knownKeys = [
        "vault", "passphrase_command", "color", "session.timeout", "session.max_age", "backup.targets",
        "report.year_start",
    ]

    /// Loaded once per process, by `Coffer.execute`, before any command runs.
    nonisolated(unsafe) private(set) static var current = Configuration()
    nonisolated(unsafe) private static var loaded = false

    static func loadOnce(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard !loaded else { return }
        current = try load(environment: environment)
        loaded = true
    }

    static func path(environment: [String: String]) -> URL {
        if let path = environment["COFFER_CONFIG"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let home =
            environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: home).appendingPathComponent(".config")
        return configHome.appendingPathComponent("coffer/config.toml")
    }

    static func load(environment: [String: String]) throws -> Configuration {
        let url = path(environment: environment)
        let shown = VaultOptions.display(url)
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            if errno == ENOENT { return Configuration() }
            throw CLIError(
                .configuration, "Cannot read the configuration file \(shown): \(String(cString: strerror(errno))).")
        }
        guard info.st_uid == getuid() || info.st_uid == 0, info.st_mode & 0o022 == 0 else {
            throw CLIError(
                .configuration,
                "The configuration file \(shown) can be changed by other users, and it may name a command Coffer runs.",
                hint: "Make it yours and private: chmod 600 \(shown)")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CLIError(.configuration, "Cannot read the configuration file \(shown).")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.configuration, "The configuration file \(shown) is not UTF-8 text.")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw CLIError(
                .configuration,
                "\(shown) line \(error.source.begin.line): \(error.description).",
                hint: "The file is TOML; see `man coffer` or Specs/cli.md, \"Configuration file\".")
        }
        return try Configuration(table, shown: shown)
    }

    init() {}

    private init(_ table: TOMLTable, shown: String) throws {
        func refuse(_ what: String, hint: String? = nil) -> CLIError {
            CLIError(.configuration, "\(shown): \(what)", hint: hint)
        }
        func string(_ key: String, in table: TOMLTable, prefix: String = "") throws -> String? {
            guard let value = table[key] else { return nil }
            guard let text = value.string else { throw refuse("\(prefix)\(key) must be a string in quotes.") }
            return text
        }
        func duration(_ key: String, in table: TOMLTable) throws -> String? {
            guard let text = try string(key, in: table, prefix: "session.") else { return nil }
            do {
                _ = try Duration.parse(text)
            } catch let error as CLIError {
                throw refuse("session.\(key): \(error.message)")
            }
            return text
        }
        var seen: [String] = []
        for key in table.keys {
            if let inner = table[key]?.table, ["session", "backup", "report"].contains(key) {
                seen += inner.keys.map { "\(key).\($0)" }
            } else {
                seen.append(key)
            }
        }
        for key in seen where !Self.knownKeys.contains(key) {
            let nearest = CommandWords.closest(to: key, among: Self.knownKeys)
            throw refuse(
                "unknown setting '\(key)'.",
                hint: nearest.map { "did you mean '\($0)'?" } ?? "Known: \(Self.knownKeys.joined(separator: ", ")).")
        }
        vault = try string("vault", in: table).map(Self.expandingHome)
        passphraseCommand = try string("passphrase_command", in: table)
        if let text = try string("color", in: table) {
            guard let choice = Style.ColorChoice(rawValue: text) else {
                throw refuse("color takes \"auto\", \"always\" or \"never\", not '\(text)'.")
            }
            color = choice
        }
        if let session = table["session"] {
            guard let session = session.table else { throw refuse("session must be a table: [session].") }
            sessionTimeout = try duration("timeout", in: session)
            sessionMaxAge = try duration("max_age", in: session)
        }
        if let backup = table["backup"] {
            guard let backup = backup.table else { throw refuse("backup must be a table: [backup].") }
            if let targets = backup["targets"] {
                guard let array = targets.array, let paths = Optional(array.compactMap { $0.string }),
                    paths.count == array.count
                else { throw refuse("backup.targets must be a list of folder paths: targets = [\"/media/usb\"].") }
                backupTargets = paths.map(Self.expandingHome)
            }
        }
        if let report = table["report"] {
            guard let report = report.table else { throw refuse("report must be a table: [report].") }
            if let start = report["year_start"] {
                guard let month = start.int, (1...12).contains(month) else {
                    throw refuse("report.year_start is the month a year starts in, 1 to 12 (4 for April).")
                }
                yearStartMonth = month
            }
        }
    }

    /// `~/…` as the shell would expand it: a TOML string is not seen by a shell.
    static func expandingHome(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + path.dropFirst()
    }
}
