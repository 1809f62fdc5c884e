import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// The `coffer` binary SwiftPM built next to this test bundle (or `COFFER_BINARY`).
let cofferBinary: URL = {
    if let path = ProcessInfo.processInfo.environment["COFFER_BINARY"] { return URL(fileURLWithPath: path) }
    let candidates = [Bundle.main.bundleURL.deletingLastPathComponent(),
                      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                      URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug").standardized]
    for directory in candidates {
        let binary = directory.appendingPathComponent("coffer")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
    }
    fatalError("coffer binary not found; build it or set COFFER_BINARY")
}()

let testParameters = KDFProfile.interactive.parameters

final class TemporaryDirectory {
    let url: URL
    init() {
        var template = Array((NSTemporaryDirectory() + "coffer-e2e-XXXXXX").utf8CString)
        url = URL(fileURLWithPath: String(cString: mkdtemp(&template)!))
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes a secret to a 0600 file and returns its path.
    func secretFile(_ name: String, _ contents: String) -> String {
        let file = path(name)
        FileManager.default.createFile(atPath: file.path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        return file.path
    }
}

struct Result {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// A sandbox for running the real binary: its own vault path, data and runtime directories,
/// and no COFFER_* variables inherited from whoever runs the tests.
struct Sandbox {
    let directory = TemporaryDirectory()
    var vault: URL { directory.path("data/coffer/vault.coffer") }
    var runtime: URL { directory.path("run") }
    var sessions: URL { runtime.appendingPathComponent("coffer") }

    var baseEnvironment: [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": directory.url.path, "XDG_DATA_HOME": directory.path("data").path,
         "XDG_RUNTIME_DIR": runtime.path, "LANG": "C.UTF-8"]
    }

    /// Starts `coffer` with posix_spawn, stdin from /dev/null (commands must never wait for a
    /// terminal) and stdout/stderr into files. Foundation's Process is not used: under many
    /// parallel children it can miss an exit and wait for ever.
    /// `fileSizeLimit` (bytes, in 512-byte blocks as `ulimit -f` counts) runs it under that limit.
    func start(_ arguments: [String], environment: [String: String] = [:], fileSizeLimit: Int? = nil) throws -> Child {
        let id = UUID().uuidString
        let out = directory.path("stdout-\(id)"), err = directory.path("stderr-\(id)")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, err.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var command = [cofferBinary.path] + arguments
        if let fileSizeLimit {
            command = ["/bin/sh", "-c", "ulimit -f \(fileSizeLimit / 512) && exec \"$0\" \"$@\""] + command
        }
        let argv = command.map { strdup($0) } + [nil]
        let envp = baseEnvironment.merging(environment) { $1 }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return Child(pid: pid, stdout: out, stderr: err)
    }

    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60, fileSizeLimit: Int? = nil) throws -> Result {
        let child = try start(arguments, environment: environment, fileSizeLimit: fileSizeLimit)
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning, Date() < deadline { usleep(2_000) }
        if child.isRunning {
            child.kill()
            Issue.record("coffer \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return try child.result()
    }

    /// `coffer init` with the interactive KDF and a passphrase file.
    func initVault(passphrase: String = "old passphrase") throws -> String {
        let file = directory.secretFile("passphrase-\(UUID().uuidString)", passphrase + "\n")
        let result = try run(["init", "--kdf", "interactive", "--passphrase-file", file])
        #expect(result.status == 0, "\(result.stderr)")
        return file
    }
}

func withRawDatabase<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
    var configuration = Configuration()
    configuration.busyMode = .timeout(30)  // coffer processes may be writing at the same time
    return try DatabaseQueue(path: url.path, configuration: configuration).write(body)
}

func fileMode(_ url: URL) -> mode_t {
    var info = stat()
    precondition(stat(url.path, &info) == 0, "no file at \(url.path)")
    return info.st_mode & 0o777
}

/// A digest of every stored row: changes if any record, the manifest, commit or header do.
func storedRowsDigest(_ vault: URL) throws -> [UInt8] {
    try withRawDatabase(vault) { db in
        var bytes: [UInt8] = []
        for table in ["header", "record", "manifest", "commit_record"] {
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1") {
                for value in row.databaseValues { bytes += Array(value.description.utf8) }
            }
        }
        return BLAKE2b.hash(bytes)
    }
}

/// A running `coffer`, reaped by its own pid.
final class Child {
    let pid: pid_t
    let stdout, stderr: URL
    private var status: Int32?

    init(pid: pid_t, stdout: URL, stderr: URL) {
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
    }

    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
        return status == nil
    }

    func kill() { if isRunning { Glibc.kill(pid, SIGKILL) } }

    /// Waits for the exit; the exit code, or 128 + the signal that ended it.
    @discardableResult
    func wait() -> Int32 {
        if status == nil {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            status = raw
        }
        let raw = status!
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    func result() throws -> Result {
        Result(status: wait(), stdout: String(decoding: try Data(contentsOf: stdout), as: UTF8.self),
               stderr: String(decoding: try Data(contentsOf: stderr), as: UTF8.self))
    }
}
