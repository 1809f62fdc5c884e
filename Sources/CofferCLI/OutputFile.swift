import Foundation
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// Where `--out` and `--html` write. A regular file (new, or replaced) is written whole under a
/// temporary name beside it, 0600, fsynced and renamed over it, so a crash never leaves half an
/// export; anything else that already exists — a device such as `/dev/null`, a FIFO, a terminal —
/// is opened and written into, never replaced (renaming over `/dev/null` as root would turn it into
/// a file of plaintext). A symbolic link is followed, as the shell's `>` follows it: the file it
/// points to is written, the link stays. A link, FIFO or device that belongs to another user
/// (one planted in a shared folder such as /tmp, to catch the plaintext or to aim it at a file)
/// is refused, as the kernel's protected_symlinks and protected_fifos refuse them to the shell.
/// `-` is standard output.
enum OutputFile {
    /// Whether `path` names standard output rather than a file.
    static func isStandardOutput(_ path: String) -> Bool { path == "-" }

    static func write(_ data: Data, to path: String) throws {
        guard !isStandardOutput(path) else { return try Output.data(data) }
        var link = stat()
        let isLink = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        if isLink, !ownedByUsOrRoot(link) {
            throw CLIError(
                .invalidInput,
                "\(path) is a symbolic link that belongs to another user; Coffer does not follow it. Nothing was written."
            )
        }
        var status = stat()
        if stat(path, &status) == 0 {
            switch status.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR: throw CLIError(.invalidInput, "\(path) is a folder; give a file name. Nothing was written.")
            case S_IFCHR, S_IFIFO, S_IFBLK:
                guard ownedByUsOrRoot(status) else {
                    throw CLIError(
                        .invalidInput,
                        "\(path) is a FIFO or device that belongs to another user; Coffer does not write into it. Nothing was written."
                    )
                }
                return try writeInto(data, path: path, expected: status)
            default:
                throw CLIError(
                    .invalidInput, "\(path) is neither a file nor a device Coffer can write to. Nothing was written.")
            }
        }
        // Renamed onto the path exactly as given when it was no link (a link planted meanwhile is
        // replaced, never followed); onto the file named by a link of our own, resolved once.
        try replace(
            isLink ? URL(fileURLWithPath: path).resolvingSymlinksInPath() : URL(fileURLWithPath: path), with: data)
    }

    private static func ownedByUsOrRoot(_ status: stat) -> Bool { status.st_uid == geteuid() || status.st_uid == 0 }

    /// Opens what was checked, and writes only if it is still that file (not swapped meanwhile).
    private static func writeInto(_ data: Data, path: String, expected: stat) throws {
        let descriptor = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_dev == expected.st_dev, opened.st_ino == expected.st_ino else {
            throw CLIError(.failure, "\(path) changed while it was being opened. Nothing was written.")
        }
        try writeAll(data, to: descriptor, path: path)
    }

    /// A new 0600 file beside it, written and fsynced, renamed over it, the folder fsynced.
    private static func replace(_ url: URL, with data: Data) throws {
        do {
            try DurableFile.replace(url, with: data)
        } catch {
            throw failure(url.path, code: error.code.rawValue)
        }
    }

    private static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws {
        do {
            try DurableFile.writeAll(data, to: descriptor)
        } catch {
            throw failure(path, code: error.code.rawValue)
        }
    }

    /// 73 when the file cannot be made where asked (no such folder, no permission, read-only),
    /// 74 when writing it failed (a full disk, an I/O error).
    private static func failure(_ path: String, code: Int32 = errno) -> CLIError {
        let cannotCreate = [ENOENT, ENOTDIR, EACCES, EPERM, EROFS, EISDIR].contains(code)
        return CLIError(
            cannotCreate ? .cannotCreate : .ioError, "Cannot write \(path): \(reason(code)). Nothing was written there."
        )
    }

    /// A failed write's cause in words; a full disk or quota is named plainly.
    static func reason(_ code: Int32) -> String {
        code == ENOSPC || code == EDQUOT ? "the disk is full" : String(cString: strerror(code))
    }
}
