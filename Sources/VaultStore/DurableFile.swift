import Foundation
import VaultCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Files written so that a crash or a power cut leaves either the old file or the whole new one:
/// every byte written and fsynced before the file takes its final name, and the directory
/// fsynced after, so the name lasts too. One copy for the package (the vault, session files,
/// high-water marks, archives and public keys), so a durability fix reaches every file Coffer
/// writes. Failures are the system's `POSIXError`, for each module to word in its own error type.
package enum DurableFile {
    /// Writes every byte to `descriptor`, going on after short writes and interrupted calls.
    package static func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32) throws(POSIXError) {
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return written < 0 ? errno : EIO }
                offset += written
            }
            return nil
        }
        if let failure { throw posixError(failure) }
    }

    /// Creates `url`, which must not exist (never through a symbolic link), readable by its owner
    /// only; writes every byte and fsyncs it. On failure no part of it is left at `url`.
    package static func create(_ url: URL, containing bytes: some ContiguousBytes) throws(POSIXError) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw posixError(errno) }
        do throws(POSIXError) {
            try writeAll(bytes, to: descriptor)
            guard fsync(descriptor) == 0 else { throw posixError(errno) }
            close(descriptor)
        } catch {
            close(descriptor)
            unlink(url.path)
            throw error
        }
    }

    /// Puts `bytes` at `url` atomically: a new owner-only file beside it, written and fsynced,
    /// renamed over it, then the directory fsynced. Readers see the old file or the new one.
    package static func replace(_ url: URL, with bytes: some ContiguousBytes) throws(POSIXError) {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).tmp")
        try create(temporary, containing: bytes)
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw posixError(code)
        }
        syncDirectory(url.deletingLastPathComponent())
    }

    /// Puts a new file at `url`, which must not exist: written and fsynced under a temporary
    /// name beside it, then hard-linked into place (`EEXIST` if `url` appeared meanwhile: never
    /// replaced), the temporary name removed and the directory fsynced. Another process (a sync
    /// engine) sees nothing or the whole file, and Coffer never rewrites one it has published.
    package static func publish(_ url: URL, containing bytes: some ContiguousBytes) throws(POSIXError) {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).tmp")
        try create(temporary, containing: bytes)
        defer { unlink(temporary.path) }
        guard link(temporary.path, url.path) == 0 else { throw posixError(errno) }
        syncDirectory(url.deletingLastPathComponent())
    }

    /// fsync(2) on a file another writer (SQLite) finished, before it is linked or renamed into
    /// place. Best effort: a file that cannot be opened was not written either.
    package static func syncFile(_ url: URL) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// fsync(2) on a directory, so a rename, link or unlink in it survives a power cut. Best
    /// effort: some file systems cannot sync a directory, and the change itself has been made.
    package static func syncDirectory(_ directory: URL) {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    private static func posixError(_ code: Int32) -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
}
