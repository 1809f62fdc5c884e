import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// Invalid command lines and inputs against a demo vault, through the real binary: each gets its
/// documented exit code, one `error: ` message that says what was wrong, a hint or a way out
/// where one exists, and leaves every stored row exactly as it was.
@Suite(.serialized) struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let arguments: [String]
        var environment: [String: String] = [:]
        let status: Int32
        /// Words the message must contain (case-insensitive).
        let says: String
        var testDescription: String { name }
    }

    /// Files the cases refer to, by placeholder, made once per sandbox.
    static let placeholders = [
        "TEXT", "EMPTY", "RANDOM", "LATIN1CSV", "BADCSV", "NOTJSON", "LATIN1JSON", "FOREIGN", "TRUNCATED", "FOLDER",
        "MISSING", "PUB",
    ]

    static let cases: [Case] = [
        // Sessions and keys
        Case(
            name: "an idle timeout longer than the session's maximum age",
            arguments: ["unlock", "--timeout", "2h", "--max-age", "1h"], status: 64,
            says: "(2h, --timeout) is longer than the maximum age (1h, --max-age)"),
        Case(
            name: "a recovery key to type, and no terminal", arguments: ["verify", "--recovery-key"], status: 77,
            says: "--recovery-key-file"),
        Case(
            name: "a configuration file that does not parse", arguments: ["overview"],
            environment: ["COFFER_CONFIG": "TEXT"], status: 78, says: "line 1"),
        // Entries that are probably slips: asked at a terminal, --yes otherwise
        Case(
            name: "a value ten times the current one", arguments: ["update", "Barclays", "30000"], status: 64,
            says: "more than ten times Barclays Current Account's current value (£2,951.85)"),
        Case(
            name: "a value of the other sign", arguments: ["update", "Barclays", "-100"], status: 64,
            says: "the other sign"),
        Case(
            name: "a value dated in the future", arguments: ["update", "Barclays", "3000", "--date", "2027-01-01"],
            status: 64, says: "2027-01-01 is in the future (today is 2026-11-22)"),
        Case(
            name: "spending dated in the future", arguments: ["spend", "5", "Groceries", "--date", "2026-12-25"],
            status: 64, says: "run the command again with --yes"),
        // Command words
        Case(
            name: "a typo of a command", arguments: ["spnd", "5", "Groceries"], status: 64,
            says: "did you mean 'spend'?"),
        Case(name: "help for a typo", arguments: ["help", "spnd"], status: 64, says: "did you mean 'spend'?"),
        Case(name: "an account by two letters", arguments: ["update", "Ho", "100"], status: 64, says: "too short"),
        Case(
            name: "a misspelt category", arguments: ["spend", "10", "grocceries"], status: 64,
            says: "did you mean 'groceries'?"),
        Case(
            name: "a prefix of several categories", arguments: ["spend", "10", "s"], status: 64, says: "categories: "),
        Case(
            name: "spending a minus amount", arguments: ["spend", "-5", "Groceries"], status: 64,
            says: "amounts are positive"),
        Case(name: "a typo of a subcommand", arguments: ["account", "lst"], status: 64, says: "did you mean 'list'?"),
        Case(name: "help for a subcommand typo", arguments: ["help", "backup", "lsit"], status: 64, says: "'list'"),
        Case(name: "a typo where a folder may stand", arguments: ["sync", "stauts"], status: 64, says: "'status'"),
        Case(name: "a word that is no command", arguments: ["xyzzy"], status: 64, says: "coffer --help"),
        Case(name: "a typo of an option", arguments: ["budget", "--mnth", "2026-01"], status: 64, says: "'--month'"),
        // Amounts
        Case(name: "amount that is a word", arguments: ["update", "Home", "abc"], status: 64, says: "not a number"),
        Case(
            name: "amount with too many decimals", arguments: ["update", "Home", "12.345"], status: 64, says: "decimal"),
        Case(name: "amount in exponent form", arguments: ["update", "Home", "1e5"], status: 64, says: "not a number"),
        Case(name: "empty amount", arguments: ["update", "Home", ""], status: 64, says: "amount"),
        Case(
            name: "amount beyond Int64", arguments: ["update", "Home", "99999999999999999999"], status: 64,
            says: "too large"),
        Case(
            name: "amount with two points", arguments: ["update", "Home", "1.2.3"], status: 64,
            says: "at most one decimal point"),
        Case(name: "spending a word", arguments: ["spend", "lots", "Groceries"], status: 64, says: "not a number"),
        Case(
            name: "spending a negative amount", arguments: ["spend", "--", "-5", "Groceries"], status: 64,
            says: "above zero"),
        Case(name: "spending nothing", arguments: ["spend", "0", "Groceries"], status: 64, says: "above zero"),
        Case(
            name: "huge spend", arguments: ["spend", "92233720368547758.07", "Groceries"], status: 64, says: "too large"
        ),
        Case(
            name: "invoice quantity that is a word",
            arguments: ["invoice", "new", "Acme Ltd", "--item", "Work", "some", "10"], status: 64, says: "quantity"),
        Case(
            name: "growth rate that is a word",
            arguments: ["account", "add", "New", "--category", "Savings", "--growth", "fast"], status: 64, says: "rate"),
        // Dates
        Case(
            name: "month 13", arguments: ["update", "Home", "100", "--date", "2025-13-01"], status: 64,
            says: "there is no month 13"),
        Case(
            name: "30 February", arguments: ["update", "Home", "100", "--date", "2025-02-30"], status: 64, says: "date"),
        Case(
            name: "a date in words", arguments: ["update", "Home", "100", "--date", "yesterday"], status: 64,
            says: "date"),
        Case(
            name: "a date with slashes", arguments: ["spend", "5", "Groceries", "--date", "2025/01/01"], status: 64,
            says: "date"),
        Case(
            name: "a five-digit year", arguments: ["update", "Home", "100", "--date", "99999-01-01"], status: 64,
            says: "date"),
        Case(name: "a month that is not one", arguments: ["budget", "--month", "2025-00"], status: 64, says: "month"),
        // Names and references
        Case(
            name: "an account that does not exist", arguments: ["update", "No Such Account", "100"], status: 64,
            says: "no account"),
        Case(
            name: "an empty account name", arguments: ["account", "add", "", "--category", "Savings"], status: 64,
            says: "name"),
        Case(
            name: "an account name taken", arguments: ["account", "add", "Home", "--category", "Property"], status: 64,
            says: "already"),
        Case(
            name: "an account name of 10,000 characters",
            arguments: ["account", "add", String(repeating: "x", count: 10_000), "--category", "Savings"], status: 64,
            says: "name"),
        Case(
            name: "renaming an account that does not exist", arguments: ["account", "rename", "Nope", "Other"],
            status: 64, says: "no account"),
        Case(
            name: "a category that does not exist", arguments: ["spend", "5", "No Such Category"], status: 64,
            says: "category"),
        Case(
            name: "an income source that does not exist", arguments: ["earn", "5", "No Such Source"], status: 64,
            says: "source"),
        Case(
            name: "a client that does not exist",
            arguments: ["invoice", "new", "Nobody Inc", "--item", "Work", "1", "10"], status: 64, says: "client"),
        Case(
            name: "a transaction id that is not one", arguments: ["transaction", "edit", "not-an-id", "--amount", "5"],
            status: 64, says: "id"),
        Case(
            name: "a transaction that does not exist",
            arguments: ["transaction", "delete", "00000000-0000-0000-0000-000000000000", "--yes"], status: 64,
            says: "transaction"),
        Case(
            name: "a rule set that does not exist", arguments: ["import", "rules", "show", "No Such Rules"], status: 64,
            says: "rule"),
        Case(
            name: "a rule without a target", arguments: ["import", "rules", "add", "Mine", "TESCO"], status: 64,
            says: "category"),
        // Bytes that are not UTF-8 reach the binary as U+FFFD (Swift's CommandLine repairs them).
        Case(
            name: "a name that is not UTF-8", arguments: ["account", "add", "Caf\u{FFFD}", "--category", "Savings"],
            status: 64, says: "utf-8"),
        // Flags and usage
        Case(name: "an unknown flag", arguments: ["overview", "--bogus"], status: 64, says: "unknown option"),
        Case(name: "an unknown command", arguments: ["frobnicate"], status: 64, says: "is not a coffer command"),
        Case(name: "a missing argument", arguments: ["update"], status: 64, says: "missing"),
        Case(
            name: "a flag without its value", arguments: ["update", "Home", "100", "--date"], status: 64,
            says: "missing value"),
        Case(
            name: "a session timeout of forever", arguments: ["unlock", "--timeout", "forever"], status: 64,
            says: "duration"),
        Case(
            name: "a session timeout of zero", arguments: ["unlock", "--timeout", "0s"], status: 64,
            says: "between 1s and 24h"),
        Case(
            name: "an unknown KDF profile", arguments: ["passphrase", "change", "--kdf", "extreme"], status: 64,
            says: "kdf"),
        Case(name: "prune without a rule", arguments: ["backup", "prune", "FOLDER"], status: 64, says: "keep"),
        Case(
            name: "an unknown export section", arguments: ["export", "json", "--only", "everything"], status: 64,
            says: "only"),
        Case(
            name: "an unknown import destination", arguments: ["import", "csv", "BADCSV", "--into", "nowhere"],
            status: 64, says: "into"),
        Case(name: "backup with no destination", arguments: ["backup", "create"], status: 64, says: "destination"),
        // Passphrases
        Case(
            name: "an empty passphrase", arguments: ["overview"], environment: ["COFFER_PASSPHRASE": ""], status: 64,
            says: "empty"),
        Case(
            name: "a wrong passphrase", arguments: ["overview"], environment: ["COFFER_PASSPHRASE": "not demo"],
            status: 77, says: "passphrase is wrong"),
        Case(
            name: "a passphrase file that does not exist", arguments: ["overview", "--passphrase-file", "MISSING"],
            environment: ["COFFER_PASSPHRASE": ""], status: 64, says: "passphrase file"),
        Case(
            name: "a passphrase command that fails", arguments: ["overview", "--passphrase-command", "exit 3"],
            environment: ["COFFER_PASSPHRASE": ""], status: 77, says: "passphrase command"),
        Case(
            name: "a session token that is not one", arguments: ["overview"],
            environment: ["COFFER_PASSPHRASE": "", "COFFER_SESSION": "cs1_garbage"], status: 77, says: "session"),
        Case(
            name: "an empty new passphrase", arguments: ["passphrase", "change"],
            environment: ["COFFER_NEW_PASSPHRASE": ""], status: 64, says: "empty"),
        // Files that are not what they should be
        Case(
            name: "a vault that does not exist", arguments: ["overview", "--vault", "MISSING"], status: 66,
            says: "no vault"),
        // No passphrase source at all and no terminal: the missing vault is named first (66),
        // never "a passphrase is needed" (77).
        Case(
            name: "no vault, before any passphrase", arguments: ["spend", "5", "Groceries", "--vault", "MISSING"],
            environment: ["COFFER_PASSPHRASE": "", "COFFER_SESSION": ""], status: 66,
            says: "create one with `coffer init`"),
        Case(
            name: "no vault to unlock", arguments: ["unlock", "--vault", "MISSING"],
            environment: ["COFFER_PASSPHRASE": "", "COFFER_SESSION": ""], status: 66, says: "create one with"),
        Case(
            name: "a text file as the vault", arguments: ["overview", "--vault", "TEXT"], status: 65,
            says: "not a coffer vault"),
        Case(
            name: "an empty file as the vault", arguments: ["overview", "--vault", "EMPTY"], status: 65,
            says: "not a coffer vault"),
        Case(
            name: "random bytes as the vault", arguments: ["overview", "--vault", "RANDOM"], status: 65,
            says: "not a coffer vault"),
        Case(
            name: "a folder as the vault", arguments: ["overview", "--vault", "FOLDER"], status: 65,
            says: "not a coffer vault"),
        Case(
            name: "a text file as an archive", arguments: ["backup", "verify", "TEXT", "--pubkey", "PUB"], status: 65,
            says: "unsigned"),
        Case(
            name: "an archive that does not exist", arguments: ["backup", "verify", "MISSING"], status: 66,
            says: "no archive"),
        // F7: a header whose recovery slot has an unknown kind/KDF pair (checksum made valid):
        // "damaged", never a crash, through every command that reads a header.
        Case(
            name: "a hostile slot pair, status", arguments: ["status", "--vault", "HOSTILEHEADER"], status: 65,
            says: "damaged"),
        Case(
            name: "a hostile slot pair, opened", arguments: ["account", "list", "--vault", "HOSTILEHEADER"], status: 65,
            says: "damaged"),
        Case(
            name: "a hostile slot pair, verified", arguments: ["verify", "--vault", "HOSTILEHEADER"], status: 65,
            says: "damaged"),
        Case(
            name: "a hostile slot pair, unlocked", arguments: ["unlock", "--vault", "HOSTILEHEADER"], status: 65,
            says: "damaged"),
        // F16: terminal escapes in any text field, on the command line.
        Case(
            name: "a client email with a terminal title escape",
            arguments: ["client", "add", "Zed", "--email", "a\u{1B}]2;T\u{07}@b"], status: 64, says: "control character"
        ),
        Case(
            name: "a client address that clears the screen",
            arguments: ["client", "add", "Zed", "--address", "Addr\u{1B}[2J"], status: 64, says: "control character"),
        Case(
            name: "an invoice item with a C1 control",
            arguments: ["invoice", "new", "Acme Ltd", "--item", "Work\u{9B}31m", "1", "5"], status: 64,
            says: "control character"),
        Case(
            name: "random bytes restored", arguments: ["restore", "RANDOM", "--to", "MISSING"], status: 65,
            says: "unsigned"),
        // F11: refused before its Argon2id parameters cost anything.
        Case(
            name: "a genuine archive without its signature restored",
            arguments: ["restore", "UNSIGNED", "--to", "MISSING"], status: 65, says: "unsigned"),
        // F12: a planted multi-gigabyte file with a genuine signature beside it is refused by its
        // structure, streamed, never read whole.
        Case(
            name: "a 3 GB sparse file with a copied signature", arguments: ["backup", "verify", "SPARSE"], status: 65,
            says: "not a coffer archive"),
        Case(
            name: "an archive of another vault", arguments: ["backup", "verify", "FOREIGN"], status: 65, says: "another"
        ),
        Case(
            name: "an archive of another vault, fully", arguments: ["backup", "verify", "FOREIGN", "--full"],
            status: 65, says: "another"),
        Case(
            name: "a truncated archive", arguments: ["backup", "verify", "TRUNCATED", "--pubkey", "PUB"], status: 65,
            says: "truncated"),
        Case(
            name: "a JSON import that is not JSON", arguments: ["import", "json", "NOTJSON"], status: 64,
            says: "not a coffer json export"),
        Case(
            name: "a JSON import in Latin-1", arguments: ["import", "json", "LATIN1JSON"], status: 64,
            says: "not a coffer json export"),
        Case(
            name: "a statement in Latin-1", arguments: ["import", "csv", "LATIN1CSV", "--into", "transactions"],
            status: 64, says: "utf-8"),
        Case(
            name: "a statement with a bad amount", arguments: ["import", "csv", "BADCSV", "--into", "transactions"],
            status: 64, says: "line 3"),
        Case(
            name: "a statement that does not exist", arguments: ["import", "csv", "MISSING", "--into", "transactions"],
            status: 66, says: "no file"),
        Case(
            name: "importing into a vault with data", arguments: ["import", "json", "EMPTYEXPORT"], status: 64,
            says: "already holds data"),
    ]

    /// One sandbox with a demo vault and the files the placeholders name.
    final class Fixture: @unchecked Sendable {
        let sandbox = Sandbox()
        let planted = scannedDirectory()
        var files: [String: String] = [:]
        let environment = ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"]

        init() throws {
            let directory = sandbox.directory
            func file(_ name: String, _ bytes: [UInt8]) -> String {
                let url = directory.path(name)
                FileManager.default.createFile(atPath: url.path, contents: Data(bytes))
                return url.path
            }
            #expect(try sandbox.run(["demo", "--vault", sandbox.vault.path], environment: environment).status == 0)
            #expect(try sandbox.run(["client", "add", "Acme Ltd"], environment: environment).status == 0)
            files["TEXT"] = file("notes.txt", Array("Shopping list: milk, eggs\n".utf8))
            files["EMPTY"] = file("empty", [])
            files["RANDOM"] = file("random.bin", (0..<8192).map { _ in UInt8.random(in: 0...255) })
            files["LATIN1CSV"] = file(
                "latin1.csv", Array("Date,Amount,Description\n2026-01-02,-4.50,Caf".utf8) + [0xE9] + Array("\n".utf8))
            files["BADCSV"] = file(
                "bad.csv", Array("Date,Amount,Description\n2026-01-02,-4.50,Coffee\n2026-01-03,lots,Cake\n".utf8))
            files["NOTJSON"] = file("export.json", Array("{\"format\": \"coffer-export\", \"version\": 2, ".utf8))
            files["LATIN1JSON"] = file(
                "latin1.json",
                Array("{\"format\": \"coffer-export\", \"currency\": \"".utf8) + [0xA3] + Array("\"}".utf8))
            files["FOLDER"] = directory.path("folder").path
            try FileManager.default.createDirectory(atPath: files["FOLDER"]!, withIntermediateDirectories: true)
            files["MISSING"] = directory.path("missing/nothing-here").path
            files["PUB"] = sandbox.vault.path + ".pub"
            let exported = try sandbox.run(["export", "json"], environment: environment)
            files["EMPTYEXPORT"] = file("export-full.json", Array(exported.stdout.utf8))

            // Another vault's archive, and a truncated copy of this vault's.
            let other = directory.path("other.coffer"), usb = directory.path("usb"), mine = directory.path("mine")
            for folder in [usb, mine] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            #expect(try sandbox.run(["demo", "--vault", other.path], environment: environment).status == 0)
            #expect(
                try sandbox.run(
                    ["backup", "create", "--to", usb.path, "--vault", other.path], environment: environment
                ).status == 0)
            files["FOREIGN"] =
                usb.appendingPathComponent(
                    try FileManager.default.contentsOfDirectory(atPath: usb.path).first { $0.hasSuffix(".cbak") }!
                ).path
            #expect(try sandbox.run(["backup", "create", "--to", mine.path], environment: environment).status == 0)
            let archive = mine.appendingPathComponent(
                try FileManager.default.contentsOfDirectory(atPath: mine.path).first { $0.hasSuffix(".cbak") }!)
            let bytes = try Data(contentsOf: archive)
            files["TRUNCATED"] = file(archive.lastPathComponent, Array(bytes.prefix(bytes.count / 2)))
            try FileManager.default.copyItem(
                atPath: archive.path + ".minisig", toPath: files["TRUNCATED"]! + ".minisig")
            // A copy of the vault whose recovery slot says kind 2 / KDF 9.
            files["HOSTILEHEADER"] = directory.path("hostile-header.coffer").path
            #expect(
                try sandbox.run(["recovery-key", "create", "--vault", other.path], environment: environment).status == 0
            )
            try FileManager.default.copyItem(atPath: other.path, toPath: files["HOSTILEHEADER"]!)
            let hostile = try DatabaseQueue(path: files["HOSTILEHEADER"]!)
            try hostile.write { db in
                var header = Array(try Data.fetchOne(db, sql: "SELECT body FROM header")!)
                header[47 + 106 + 1] = 9
                let body = Array(header.dropLast(32))
                try db.execute(sql: "UPDATE header SET body = ?", arguments: [Data(body + BLAKE2b.hash(body))])
            }
            try hostile.close()
            files["UNSIGNED"] = file("unsigned-" + archive.lastPathComponent, Array(bytes))
            // Outside the sandbox, which the leak scan reads file by file.
            files["SPARSE"] = planted.path("coffer-20991231-235959-000001.cbak").path
            FileManager.default.createFile(atPath: files["SPARSE"]!, contents: nil)
            let sparse = try FileHandle(forWritingTo: URL(fileURLWithPath: files["SPARSE"]!))
            try sparse.truncate(atOffset: 3 << 30)
            try sparse.close()
            try FileManager.default.copyItem(atPath: archive.path + ".minisig", toPath: files["SPARSE"]! + ".minisig")
        }
    }

    static let fixture = Swift.Result { try Fixture() }

    @Test(arguments: cases) func refusedWithTheDocumentedCodeAndNothingChanged(_ badInput: Case) throws {
        let fixture = try Self.fixture.get()
        let vault = fixture.sandbox.vault
        let before = try storedRowsDigest(vault)
        let arguments = badInput.arguments.map { fixture.files[$0] ?? $0 }
        let result = try fixture.sandbox.run(
            arguments,
            environment: fixture.environment.merging(badInput.environment.mapValues { fixture.files[$0] ?? $0 }) { $1 })
        #expect(result.status == badInput.status, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.hasPrefix("error: "), "one error style for every error:\n\(result.stderr)")
        #expect(
            result.stderr.lowercased().contains(badInput.says.lowercased()),
            "the message must say '\(badInput.says)': \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
        #expect(try storedRowsDigest(vault) == before, "the vault changed")
    }

    /// The shared sandbox lives as long as the process, so the leak scan that runs when a
    /// sandbox is removed would never see it: scanned here, after every case (the suite runs in order).
    @Test func theSharedSandboxLeaksNothing() throws {
        LeakScan.shared.scan(try Self.fixture.get().sandbox.directory.url)
    }

    @Test func theTableIsLargeEnough() {
        #expect(Self.cases.count >= 50)
        #expect(Set(Self.cases.map(\.name)).count == Self.cases.count)
    }
}
