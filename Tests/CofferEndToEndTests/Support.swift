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

    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (Process, URL, URL) {
        let process = Process()
        process.executableURL = cofferBinary
        process.arguments = arguments
        process.environment = baseEnvironment.merging(environment) { $1 }
        let id = UUID().uuidString
        let out = directory.path("stdout-\(id)"), err = directory.path("stderr-\(id)")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice  // no terminal: commands must never wait
        try process.run()
        return (process, out, err)
    }

    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60) throws -> Result {
        let (process, out, err) = try start(arguments, environment: environment)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            Issue.record("coffer \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
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
    try DatabaseQueue(path: url.path).write(body)
}

func fileMode(_ url: URL) -> mode_t {
    var info = stat()
    precondition(stat(url.path, &info) == 0, "no file at \(url.path)")
    return info.st_mode & 0o777
}
