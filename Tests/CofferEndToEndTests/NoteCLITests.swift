import CofferTestSupport
import Foundation
import Testing

/// The notes vault through the real binary: text from standard input or from `$EDITOR` (a shell
/// script standing in for one), saved while the editor runs, and nothing left behind.
@Suite struct NoteCLITests {
    let sandbox = Sandbox()
    static let pensionNumber = "Aviva pension PN-4471-0093 (policy in the blue folder)"

    func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> RunResult {
        try sandbox.run(
            arguments,
            environment: ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": "2026-11-01"].merging(
                environment
            ) { $1 }, input: input)
    }

    func ok(_ arguments: String..., input: String? = nil) throws -> String {
        let result = try run(arguments, input: input)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout
    }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try run(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    /// A new folder on a RAM-backed file system, as `XDG_RUNTIME_DIR` is on a desktop.
    static func ramFolder() -> String {
        var template = Array("/dev/shm/coffer-note-test-XXXXXX".utf8CString)
        return String(cString: mkdtemp(&template)!)
    }

    @Test func whereDidIWriteMyPensionNumber() throws {
        _ = try sandbox.initVault()
        LeakScan.shared.noteSecret(Self.pensionNumber)
        _ = try ok("account", "add", "Workplace pension", "--category", "Pensions")
        _ = try ok("client", "add", "Acme Ltd")
        #expect(
            try ok(
                "note", "add", "Pension number", "--stdin", "--account", "Workplace",
                input: Self.pensionNumber + "\n\tAsk HR for the scheme name.\n"
            ).contains("Added note Pension number."))
        _ = try ok("note", "add", "Will", "--stdin", input: "With the solicitor on High St.\n")

        // The list shows where each note is, never its text.
        let list = try ok("note", "list")
        #expect(list.contains("Pension number") && list.contains("account Workplace pension"), "\(list)")
        #expect(!list.contains("PN-4471"))
        let listed = try json("note", "list")["notes"] as! [[String: Any]]
        #expect(listed.map { $0["title"] as? String } == ["Pension number", "Will"])
        #expect(listed.allSatisfy { $0["body"] == nil })
        #expect((listed[0]["attachedTo"] as? [String: String]) == ["kind": "account", "name": "Workplace pension"])
        #expect(listed[1]["attachedTo"] is NSNull)
        #expect(listed[0]["created"] as? String == "2026-11-01")

        // Search finds a note by its text and says where: the question this vault exists for.
        let found = try json("search", "4471", "--kind", "notes")
        let hit = (found["results"] as? [[String: Any]])?.first
        #expect(hit?["kind"] as? String == "notes" && hit?["title"] as? String == "Pension number", "\(found)")
        #expect(hit?["field"] as? String == "body" && (hit?["snippet"] as? String ?? "").contains("PN-4471"))
        #expect((try json("search", "solicitor")["counts"] as? [String: Int])?["notes"] == 1)

        // By a unique prefix of 3 letters or more.
        #expect(try ok("note", "show", "pen").contains("PN-4471-0093"))
        let shown = try json("note", "show", "Pension number")
        #expect(shown["body"] as? String == Self.pensionNumber + "\n\tAsk HR for the scheme name.\n")
        #expect(try run(["note", "show", "pe"]).status == 64)
        let missing = try run(["note", "show", "Passport"])
        #expect(missing.status == 64 && missing.stderr.contains("No note matches 'Passport'"), "\(missing.stderr)")

        // Shown on the account's screen.
        #expect(try json("account", "show", "Workplace")["notes"] as? [String] == ["Pension number"])
        #expect(try ok("account", "show", "Workplace").contains("Notes: Pension number"))

        // Moved to a client, then detached: one change each.
        _ = try ok("note", "edit", "Pension", "--client", "Acme")
        #expect(try json("client", "show", "Acme")["notes"] as? [String] == ["Pension number"])
        #expect(try json("account", "show", "Workplace")["notes"] as? [String] == [])
        _ = try ok("note", "edit", "Pension", "--detach")
        #expect(try json("client", "show", "Acme")["notes"] as? [String] == [])
        #expect(try run(["note", "edit", "Pension", "--detach", "--client", "Acme"]).status == 64)
        #expect(
            try run(["note", "add", "Twice", "--stdin", "--client", "Acme", "--account", "Workplace"], input: "x")
                .status == 64)

        // Replaced from standard input; removed, undone, redone.
        _ = try ok("note", "edit", "Will", "--stdin", input: "Copy in the safe, original with the solicitor.\n")
        #expect(
            try json("note", "show", "Will")["body"] as? String == "Copy in the safe, original with the solicitor.\n")
        let removed = try run(["note", "rm", "Will"])
        #expect(removed.status == 0 && removed.stdout.contains("Removed note Will."))
        #expect(try ok("undo").contains("Removed note Will"))
        #expect(
            try json("note", "show", "Will")["body"] as? String == "Copy in the safe, original with the solicitor.\n")
        _ = try ok("note", "delete", "Will")
        _ = try ok("note", "remove", "Pension")
        #expect(try ok("note", "list").contains("No notes yet."))
        let log = try ok("log")
        #expect(log.contains("Added note Pension number") && log.contains("Edited note Will"), "\(log)")
        #expect(!log.contains("PN-4471"), "summaries name the title, never the text")
    }

    @Test func badTextIsRefusedAndNeverEchoed() throws {
        _ = try sandbox.initVault()
        let escape = try run(["note", "add", "Bank", "--stdin"], input: "sort code 12-34-56\u{1B}]2;pwned\u{07}")
        #expect(escape.status == 64 && escape.stderr.contains("control character"), "\(escape.stderr)")
        #expect(!escape.stderr.contains("12-34-56"))
        let big = try run(["note", "add", "Bank", "--stdin"], input: String(repeating: "x", count: 64 * 1024 + 1))
        #expect(big.status == 64 && big.stderr.contains("64 KiB"), "\(big.stderr)")
        #expect(try run(["note", "add", "Bank", "--stdin"], input: "").status == 64)
        _ = try ok("note", "add", "Bank", "--stdin", input: String(repeating: "y", count: 64 * 1024))
        #expect(try run(["note", "add", "bank", "--stdin"], input: "again").status == 64)
        #expect(try ok("note", "list").contains("Bank"))
    }

    /// The editor (a script) saves twice; a second `coffer` it starts sees the first save in the
    /// vault while the editor is still running. Afterwards the private folder is gone, nothing
    /// in the runtime folder or the sandbox holds the text, and no command line held it.
    @Test func editorSavesContinuouslyAndLeavesNothingBehind() throws {
        _ = try sandbox.initVault()
        let runtime = Self.ramFolder()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let (first, second) = ("Please close account 4471-5566 today", "and move the balance to 8802-1133 instead")
        LeakScan.shared.noteSecret(first)
        LeakScan.shared.noteSecret(second)
        let marks = sandbox.directory.path("marks").path
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        let script = sandbox.directory.secretFile(
            "editor.sh",
            """
            #!/bin/sh
            grandparent=$(cut -d' ' -f4 /proc/$PPID/stat)
            cat /proc/$$/cmdline /proc/$PPID/cmdline /proc/$grandparent/cmdline > "$NOTE_TEST_MARKS/cmdlines.txt"
            ls -ld "$(dirname "$1")" > "$NOTE_TEST_MARKS/folder.txt"
            env | grep -c '^COFFER_PASSPHRASE=' > "$NOTE_TEST_MARKS/secrets.txt"
            printf 'Dear bank,\\n%s\\n' '\(first)' > "$1"
            i=0
            while [ $i -lt 100 ]; do
                if COFFER_PASSPHRASE="$NOTE_TEST_PASSPHRASE" "$NOTE_TEST_COFFER" note show 'Letter to the bank' | grep -q 4471-5566; then
                    echo seen > "$NOTE_TEST_MARKS/seen.txt"
                    break
                fi
                sleep 0.1
                i=$((i + 1))
            done
            printf 'Dear bank,\\n%s\\n%s\\n' '\(first)' '\(second)' > "$1"

            """)
        chmod(script, 0o700)
        let environment = [
            "EDITOR": script, "XDG_RUNTIME_DIR": runtime, "NOTE_TEST_MARKS": marks,
            "NOTE_TEST_COFFER": cofferBinary.path, "NOTE_TEST_PASSPHRASE": "old passphrase",
        ]
        let added = try run(["note", "add", "Letter to the bank"], environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("Added note Letter to the bank (saved 2 times)."), "\(added.stdout)")
        #expect(
            FileManager.default.fileExists(atPath: marks + "/seen.txt"),
            "the first save was in the vault while the editor still ran")
        #expect(try json("note", "show", "Letter")["body"] as? String == "Dear bank,\n\(first)\n\(second)\n")
        let log = try ok("log")
        #expect(log.contains("Added note Letter to the bank") && log.contains("Edited note Letter to the bank"))
        // The editor's folder was private, and is gone.
        let folder = try String(contentsOfFile: marks + "/folder.txt", encoding: .utf8)
        #expect(folder.hasPrefix("drwx------"), "\(folder)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime) == [])
        #expect(
            try String(contentsOfFile: marks + "/secrets.txt", encoding: .utf8) == "0\n",
            "the editor does not get COFFER_PASSPHRASE")
        // No process on the way had the text on its command line (the editor, its shell, coffer).
        let commandLines = try String(contentsOfFile: marks + "/cmdlines.txt", encoding: .utf8)
        #expect(commandLines.contains("note") && commandLines.contains("editor.sh"), "\(commandLines)")
        #expect(!commandLines.contains("4471") && !commandLines.contains("8802"))

        // Editing an existing note: an unchanged save writes nothing.
        let unchanged = try run(
            ["note", "edit", "Letter"], environment: ["EDITOR": "true", "XDG_RUNTIME_DIR": runtime])
        #expect(unchanged.status == 0 && unchanged.stdout.contains("unchanged"), "\(unchanged.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime) == [])
        LeakScan.shared.scan(URL(fileURLWithPath: runtime))
    }

    /// Plaintext on a disk could be read back after the edit: refused (73) before anything is
    /// written, unless `--allow-disk`; the folder is wiped either way.
    @Test func aDiskBackedRuntimeFolderIsRefusedUnlessAllowed() throws {
        _ = try sandbox.initVault()
        // The build folder is on the disk the package is on (not a tmpfs, unlike /dev/shm).
        let disk = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../.build/note-test-\(UUID().uuidString)").standardized.path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: disk) }
        let marker = sandbox.directory.path("ran.txt").path
        let script = sandbox.directory.secretFile(
            "disk-editor.sh", "#!/bin/sh\necho ran > '\(marker)'\nprintf 'Spare key under the third pot' > \"$1\"\n")
        chmod(script, 0o700)
        LeakScan.shared.noteSecret("Spare key under the third pot")
        let environment = ["EDITOR": script, "XDG_RUNTIME_DIR": disk]
        let refused = try run(["note", "add", "Spare key"], environment: environment)
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("on a disk") && refused.stderr.contains("--allow-disk"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the editor never ran")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == [])
        #expect(try ok("note", "list").contains("No notes yet."))

        let allowed = try run(["note", "add", "Spare key", "--allow-disk"], environment: environment)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try json("note", "show", "Spare")["body"] as? String == "Spare key under the third pot")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == [], "wiped and removed")
        LeakScan.shared.scan(URL(fileURLWithPath: disk))

        let gone = try run(
            ["note", "edit", "Spare"], environment: ["EDITOR": script, "XDG_RUNTIME_DIR": disk + "/none"])
        #expect(gone.status == 73, "\(gone.stderr)")
    }
}
