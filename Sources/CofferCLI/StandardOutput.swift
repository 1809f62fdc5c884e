// The C library's `stdout` is a global variable, which Swift 6 lets code touch only through
// modules imported for pre-concurrency use (Foundation re-exports the C library): only this file
// imports them so.
@preconcurrency import Foundation
import VaultStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Standard output that fails (a full disk, `> /dev/full`) is an error the user hears about,
/// never a crash and never a silent exit 0.
extension Output {
    /// Bytes as they are (an export, a page) on standard output, after any text printed before
    /// them; a failed write is an error (74), never a crash.
    static func data(_ data: Data) throws {
        try flush()
        do {
            try DurableFile.writeAll(data, to: STDOUT_FILENO)
        } catch {
            throw standardOutputFailure(error.code.rawValue)
        }
    }

    /// Writes out what `print` buffered; throws if that, or any earlier write to stdout, failed
    /// (the stream's error flag is cleared, so the next line of a shell starts afresh).
    static func flush() throws {
        let flushed = fflush(stdout) == 0
        let code = errno
        guard !flushed || ferror(stdout) != 0 else { return }
        clearerr(stdout)
        throw standardOutputFailure(flushed ? EIO : code)
    }

    private static func standardOutputFailure(_ code: Int32) -> CLIError {
        CLIError(.ioError, "Cannot write to standard output: \(OutputFile.reason(code)).")
    }
}
