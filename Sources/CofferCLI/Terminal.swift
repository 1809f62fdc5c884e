import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// Terminal input and output: the no-echo passphrase prompt, and messages on stderr.
enum Terminal {
    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Writes `text` as it is to stderr. A failure there (stderr on a full disk) is let go: there
    /// is nowhere left to report it, and the command's exit status still tells. (Foundation's
    /// `FileHandle.write` would crash the process instead.)
    static func writeError(_ text: String) {
        try? DurableFile.writeAll(Data(text.utf8), to: STDERR_FILENO)
    }

    /// Writes to stderr, which keeps stdout clean for `eval "$(coffer unlock)"` and `--json`.
    static func note(_ text: String) {
        ProgressMeter.shared.clearLine()
        var lines = [TextSafety.printable(text)]
        if let width = width(of: STDERR_FILENO) {
            lines = lines[0].split(separator: "\n", omittingEmptySubsequences: false).flatMap {
                DisplayWidth.wrapped(String($0), to: width)
            }
        }
        writeError(lines.joined(separator: "\n") + "\n")
    }

    /// The width of the terminal on standard output; nil when it is not a terminal.
    static var outputWidth: Int? { width(of: STDOUT_FILENO) }

    private static func width(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard isatty(descriptor) == 1, ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else {
            return nil
        }
        return Int(size.ws_col)
    }

    /// Asks a yes/no question on the terminal (default no). Without a terminal, refuses with
    /// exit 64 and the `--yes` hint, so a script never hangs or deletes by accident.
    static func confirm(_ question: String, refusal: String) throws -> Bool {
        guard standardInputIsTerminal else {
            throw CLIError(
                .invalidInput, "\(refusal) needs confirmation. Nothing was changed.",
                hint: "Add --yes to go ahead without asking.")
        }
        writeError("\(question) [y/N] ")
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// The terminal settings to restore if the user presses Ctrl-C while echo is off.
    nonisolated(unsafe) private static var savedSettings = termios()

    /// Reads one line from the terminal on stdin with echo off. The bytes are returned in an
    /// ordinary array that the caller must wipe.
    static func readSecretLine(prompt: String) throws -> [UInt8] {
        writeError(prompt)
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else {
            throw CLIError(.failure, "Cannot read from the terminal.")
        }
        savedSettings = settings
        var silent = settings
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ICANON)
        let previousHandler = signal(SIGINT) { _ in
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &Terminal.savedSettings)
            _exit(130)
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
            signal(SIGINT, previousHandler)
            writeError("\n")
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }
}
