import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// The `coffer` binary SwiftPM built next to this test bundle (or `COFFER_BINARY`).
public let cofferBinary: URL = {
    if let path = ProcessInfo.processInfo.environment["COFFER_BINARY"] { return URL(fileURLWithPath: path) }
    let candidates = [
        Bundle.main.bundleURL.deletingLastPathComponent(),
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug")
            .standardized,
    ]
    for directory in candidates {
        let binary = directory.appendingPathComponent("coffer")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
    }
    fatalError("coffer binary not found; build it or set COFFER_BINARY")
}()

/// The sandbox folder of an end-to-end test: every file the tests made in it is scanned for
/// plaintext before it is removed.
public func scannedDirectory() -> TemporaryDirectory {
    TemporaryDirectory(prefix: "coffer-e2e") { LeakScan.shared.scan($0) }
}

extension TemporaryDirectory {
    /// Writes a secret to a 0600 file and returns its path.
    public func secretFile(_ name: String, _ contents: String) -> String {
        let file = path(name)
        FileManager.default.createFile(
            atPath: file.path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        LeakScan.shared.noteSecret(contents.trimmingCharacters(in: .newlines), file: file.path)
        return file.path
    }
}

/// The leak scan that runs over the whole end-to-end suite. Every `coffer` started records its
/// argv; passphrases and session tokens it was given are secrets, and the data values on its
/// command lines (names, notes, amounts in words) are canaries. Before a sandbox is removed,
/// every file in it that Coffer wrote and that is not plaintext by design (exports, captured
/// output, the tests' own inputs) is searched for all of them, and every argv for the secrets.
/// Any hit fails the test that owned the sandbox. `COFFER_LEAK_REPORT=FILE` appends the figures.
public final class LeakScan: @unchecked Sendable {
    public static let shared = LeakScan()
    /// Shorter strings would match random ciphertext by chance.
    static let minimumLength = 8
    /// Files that hold plaintext on purpose: exports, statements and other inputs the tests wrote,
    /// and the captured stdout and stderr of each run.
    static let plaintextExtensions: Set<String> = ["json", "csv", "ledger", "journal", "txt", "html", "md", "tsv"]

    private let lock = NSLock()
    private var secrets: Set<String> = []
    private var canaries: Set<String> = []
    private var secretFiles: Set<String> = []
    private var argvCount = 0

    public func noteSecret(_ secret: String, file: String? = nil) {
        lock.withLock {
            if secret.utf8.count >= Self.minimumLength { secrets.insert(secret) }
            if let file { secretFiles.insert(file) }
        }
    }

    /// Records one child's command line and environment; reports a secret on its command line.
    public func noteProcess(arguments: [String], environment: [String: String]) {
        for key in ["COFFER_PASSPHRASE", "COFFER_NEW_PASSPHRASE", "COFFER_SESSION"] {
            if let value = environment[key] { noteSecret(value) }
        }
        let data = arguments.filter { argument in
            argument.utf8.count >= Self.minimumLength && !argument.hasPrefix("-") && !argument.contains("/")
                && argument.contains { $0.isLetter } && argument.contains(" ")
        }
        let known = lock.withLock {
            argvCount += 1
            canaries.formUnion(data)
            return secrets
        }
        for secret in known where arguments.contains(where: { $0.contains(secret) }) {
            Issue.record("a secret was passed on a command line (visible in ps): coffer \(arguments.first ?? "")")
        }
    }

    /// `report`: false for the scan's own self-test, whose planted hits are not the suite's.
    public func scan(_ directory: URL, report: Bool = true) {
        let (secrets, canaries, secretFiles, argvCount) = lock.withLock {
            (self.secrets, self.canaries, self.secretFiles, self.argvCount)
        }
        let needles = (secrets.map { ($0, "secret") } + canaries.map { ($0, "canary") }).map {
            (Array($0.0.utf8), $0.1)
        }
        var files = 0, bytes = 0, hits: [String] = []
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let file = enumerator?.nextObject() as? URL {
            let name = file.lastPathComponent
            // An editor's folder for a note holds nothing on purpose: its note.txt is read too.
            let inEditorsFolder = file.deletingLastPathComponent().lastPathComponent.hasPrefix("coffer-note-")
            guard (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                inEditorsFolder || !Self.plaintextExtensions.contains(file.pathExtension.lowercased()),
                !name.hasPrefix("stdout-"), !name.hasPrefix("stderr-"), !secretFiles.contains(file.path),
                let contents = FileManager.default.contents(atPath: file.path)
            else { continue }
            files += 1
            bytes += contents.count
            for (needle, kind) in needles {
                if contents.withUnsafeBytes({ Self.contains($0, needle) }) {
                    hits.append(
                        "\(kind) found in \(file.path.replacingOccurrences(of: directory.path + "/", with: ""))")
                }
            }
        }
        for hit in hits { Issue.record("plaintext leak: \(hit)") }
        if report, let report = ProcessInfo.processInfo.environment["COFFER_LEAK_REPORT"] {
            let line =
                "files=\(files) bytes=\(bytes) secrets=\(secrets.count) canaries=\(canaries.count) processes=\(argvCount) hits=\(hits.count)\n"
            lock.withLock {
                if let handle = FileHandle(forWritingAtPath: report)
                    ?? (FileManager.default.createFile(atPath: report, contents: nil)
                        ? FileHandle(forWritingAtPath: report) : nil)
                {
                    handle.seekToEndOfFile()
                    handle.write(Data(line.utf8))
                    try? handle.close()
                }
            }
        }
    }

    /// memchr to each candidate first byte, then memcmp: a thousand needles over every file the
    /// suite writes must stay quick (glibc's memmem is not visible from Swift).
    private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        return needle.withUnsafeBytes { needleBytes in
            var start = haystack.baseAddress!
            var remaining = haystack.count - needle.count + 1  // positions where the needle could start
            while remaining > 0, let hit = memchr(start, Int32(first), remaining) {
                if memcmp(hit, needleBytes.baseAddress!, needle.count) == 0 { return true }
                let skipped = UnsafeRawPointer(hit) - start + 1
                start += skipped
                remaining -= skipped
            }
            return false
        }
    }
}

public struct RunResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

/// A sandbox for running the real binary: its own vault path, data and runtime directories,
/// and no COFFER_* variables inherited from whoever runs the tests.
public struct Sandbox {
    public let directory = scannedDirectory()

    public init() {}
    public var vault: URL { directory.path("data/coffer/vault.coffer") }
    public var runtime: URL { directory.path("run") }
    public var sessions: URL { runtime.appendingPathComponent("coffer") }

    public var baseEnvironment: [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": directory.url.path, "XDG_DATA_HOME": directory.path("data").path,
            "XDG_RUNTIME_DIR": runtime.path, "TMPDIR": directory.path("tmp").path, "LANG": "C.UTF-8",
        ]
    }

    /// Starts `coffer` with posix_spawn, stdin from /dev/null (commands must never wait for a
    /// terminal; `input`, when given, is read from a file instead) and stdout/stderr into files. Foundation's Process is not used: under many
    /// parallel children it can miss an exit and wait for ever.
    /// `fileSizeLimit` (bytes, in 512-byte blocks as `ulimit -f` counts) runs it under that limit.
    /// `redirected` opens those descriptors (1: stdout, 2: stderr) on the paths given instead
    /// (`/dev/full`, where every write fails); the result's text for them is then empty.
    /// `peakMemoryReport` writes the child's peak RSS in bytes to that file: a small Python parent
    /// forks it and reads wait4's figure (spawned straight from this large test process, the
    /// kernel would count our own peak as the child's).
    public func start(
        _ arguments: [String], environment: [String: String] = [:], fileSizeLimit: Int? = nil,
        peakMemoryReport: URL? = nil, input: String? = nil, redirected: [Int32: String] = [:]
    ) throws -> Child {
        try? FileManager.default.createDirectory(at: directory.path("tmp"), withIntermediateDirectories: true)
        let id = UUID().uuidString
        let out = directory.path("stdout-\(id)"), err = directory.path("stderr-\(id)")
        var stdin = "/dev/null"
        if let input {
            stdin = directory.path("stdin-\(id)").path
            try Data(input.utf8).write(to: URL(fileURLWithPath: stdin))
            // The test's own input (a note's text for `--stdin`, say): plaintext by design.
            LeakScan.shared.noteSecret("", file: stdin)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        for (descriptor, file) in [(Int32(1), out), (2, err)] {
            if let path = redirected[descriptor] {
                FileManager.default.createFile(atPath: file.path, contents: nil)
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY, 0)
            } else {
                posix_spawn_file_actions_addopen(&actions, descriptor, file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            }
        }
        var command = [cofferBinary.path] + arguments
        if let peakMemoryReport {
            let measure =
                "import os,sys\npid=os.fork()\nif pid==0: os.execv(sys.argv[2],sys.argv[2:])\n_,status,usage=os.wait4(pid,0)\n"
                + "open(sys.argv[1],'w').write(str(usage.ru_maxrss*1024))\nsys.exit(os.waitstatus_to_exitcode(status) % 256)"
            command = ["/usr/bin/python3", "-c", measure, peakMemoryReport.path] + command
        }
        if let fileSizeLimit {
            command = ["/bin/sh", "-c", "ulimit -f \(fileSizeLimit / 512) && exec \"$0\" \"$@\""] + command
        }
        let argv = command.map { strdup($0) } + [nil]
        let fullEnvironment = baseEnvironment.merging(environment) { $1 }
        LeakScan.shared.noteProcess(arguments: arguments, environment: fullEnvironment)
        let envp = fullEnvironment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return Child(pid: pid, stdout: out, stderr: err)
    }

    @discardableResult
    public func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60,
        fileSizeLimit: Int? = nil, input: String? = nil, redirected: [Int32: String] = [:]
    ) throws -> RunResult {
        let child = try start(
            arguments, environment: environment, fileSizeLimit: fileSizeLimit, input: input,
            redirected: redirected)
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning, Date() < deadline { usleep(2_000) }
        if child.isRunning {
            child.kill()
            Issue.record("coffer \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return try child.result()
    }

    /// Runs another program (a peer such as minisign) to its end, output discarded; its exit status.
    /// Runs a Python script of the tests (`Tests/NAME/FILE.py`, beside the calling test's folder)
    /// with the coffer binary as its first argument; returns its status and everything it printed.
    public func runPythonScript(_ relativePath: String, from testFile: String = #filePath, _ arguments: [String] = [])
        throws -> (status: Int32, output: String)
    {
        let script = URL(fileURLWithPath: testFile).deletingLastPathComponent()
            .appendingPathComponent("../\(relativePath)").standardized
        let log = directory.path("script-output.txt")
        let status = try runTool(
            "/bin/sh",
            [
                "-c", "log=$1; shift; python3 \"$@\" > \"$log\" 2>&1", "sh", log.path, script.path, cofferBinary.path,
            ] + arguments)
        return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    public func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(
                &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return (status >> 8) & 0xff
    }

    /// `coffer init` with the interactive KDF and a passphrase file.
    public func initVault(passphrase: String = "old passphrase") throws -> String {
        let file = directory.secretFile("passphrase-\(UUID().uuidString)", passphrase + "\n")
        let result = try run(["init", "--kdf", "interactive", "--passphrase-file", file])
        #expect(result.status == 0, "\(result.stderr)")
        return file
    }
}

public func withRawDatabase<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
    var configuration = Configuration()
    configuration.busyMode = .timeout(30)  // coffer processes may be writing at the same time
    return try DatabaseQueue(path: url.path, configuration: configuration).write(body)
}

/// Flips one bit of a stored page's ciphertext (the row `locator` names), as an attacker with
/// the file can.
public func flipStoredByte(_ url: URL, page locator: Data, fromEnd offset: Int) throws {
    try withRawDatabase(url) { db in
        var sealed = [UInt8](
            try Data.fetchOne(db, sql: "SELECT sealed FROM page WHERE locator = ?", arguments: [locator])!)
        sealed[sealed.count - offset] ^= 0x01
        try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [Data(sealed), locator])
    }
}

public func fileMode(_ url: URL) -> mode_t {
    var info = stat()
    precondition(stat(url.path, &info) == 0, "no file at \(url.path)")
    return info.st_mode & 0o777
}

/// A digest of every stored row: changes if any page, index, commit or header do (or, with
/// `legacyTables`, any record, manifest bucket, commit or header of a format 1 or 2 file).
public func storedRowsDigest(_ vault: URL, legacyTables: Bool = false) throws -> [UInt8] {
    try withRawDatabase(vault) { db in
        var bytes: [UInt8] = []
        let tables =
            legacyTables
            ? ["header", "record", "manifest", "commit_record"] : ["header", "page", "page_index", "commit_record"]
        for table in tables {
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1") {
                for value in row.databaseValues { bytes += Array(value.description.utf8) }
            }
        }
        return BLAKE2b.hash(bytes)
    }
}

/// A running `coffer`, reaped by its own pid.
public final class Child {
    public let pid: pid_t
    public let stdout, stderr: URL
    private var status: Int32?

    public init(pid: pid_t, stdout: URL, stderr: URL) {
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
    }

    public var isRunning: Bool {
        guard status == nil else { return false }
        reap(options: WNOHANG)
        return status == nil
    }

    private func reap(options: Int32) {
        var raw: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &raw, options) } while reaped == -1 && errno == EINTR
        if reaped == pid { status = raw }
    }

    public func kill() { if isRunning { Glibc.kill(pid, SIGKILL) } }

    /// Waits for the exit; the exit code, or 128 + the signal that ended it.
    @discardableResult
    public func wait() -> Int32 {
        if status == nil { reap(options: 0) }
        let raw = status!
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    public func result() throws -> RunResult {
        RunResult(
            status: wait(), stdout: String(decoding: try Data(contentsOf: stdout), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: stderr), as: UTF8.self))
    }
}

/// Failures collected from concurrent workers.
public final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    public init() {}
    public func add(_ message: String) { lock.withLock { messages.append(message) } }
    public var all: [String] { lock.withLock { messages } }
}
