import CofferTestSupport
import Foundation
import Testing

/// `scripts/install` puts the binary, a man page generated from the command definitions and
/// completions for bash, zsh and fish under PREFIX, where a user's system finds them.
@Suite struct InstallTests {
    let sandbox = Sandbox()
    /// Outside the sandbox: the manual quotes example names other tests use as canaries, which
    /// the sandbox's leak scan would report.
    let installed = TemporaryDirectory(prefix: "coffer-install")
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized

    func shell(_ script: String, environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let output = sandbox.directory.path("shell-output-\(UUID().uuidString)")
        let status = try sandbox.runTool(
            "/bin/bash", ["-c", "(\(script)) >\"\(output.path)\" 2>&1"])
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test func installsTheBinaryManPageAndCompletions() throws {
        let prefix = installed.path("prefix")
        let install = try shell(
            "cd '\(Self.repository.path)' && PREFIX='\(prefix.path)' scripts/install --binary '\(cofferBinary.path)'")
        #expect(install.status == 0, "\(install.output)")
        let files = [
            "bin/coffer", "share/man/man1/coffer.1", "share/bash-completion/completions/coffer",
            "share/zsh/site-functions/_coffer", "share/fish/vendor_completions.d/coffer.fish",
        ]
        for file in files {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file)")
        }
        #expect(FileManager.default.isExecutableFile(atPath: prefix.appendingPathComponent("bin/coffer").path))

        // The man page is mdoc for section 1, and names the commands and flags of today's definitions.
        let manual = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/coffer.1"), encoding: .utf8)
        #expect(manual.contains(".Dt COFFER 1"))
        for word in ["unlock", "max-age", "recovery-key", "redo", "shell", "batch"] {
            #expect(manual.contains(word), "the manual mentions \(word)")
        }

        // Bash completes command words and subcommands.
        let completion = prefix.appendingPathComponent("share/bash-completion/completions/coffer").path
        func complete(_ words: [String]) throws -> [String] {
            let line = words.joined(separator: " ")
            let script = """
                shopt -s extglob; source '\(completion)'; COMP_WORDS=(\(words.joined(separator: " "))); \
                COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=\(line.count); \
                _coffer coffer '\(words.last!)' '\(words[words.count - 2])'; printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try shell(script)
            #expect(result.status == 0, "\(result.output)")
            return result.output.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["coffer", "sp"]) == ["spend"])
        #expect(try complete(["coffer", "sync", "stat"]) == ["status"])
        #expect(try complete(["coffer", "re"]).contains("redo"))
    }
}
