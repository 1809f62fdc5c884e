import CofferKit
import Foundation

/// A note's body edited in `$EDITOR` without its plaintext outliving the edit: the file lives in
/// a new 0700 folder on a RAM-backed file system (`$XDG_RUNTIME_DIR`, else `/dev/shm`), a
/// disk-backed one is refused unless `--allow-disk`, and afterwards every file in the folder
/// (the editor's swap and backup files too) is overwritten with zeros, synced and removed, then
/// the folder. While the editor runs the file is read four times a second and each saved
/// version is kept in the vault as it appears (the WONDER design's "saved continuously"), so a
/// crash or a closed terminal loses at most the unsaved typing.
enum NoteEditor {
    /// File systems whose pages never reach a disk (short of swap).
    static let ramBackedFileSystems: Set<String> = ["tmpfs", "ramfs"]
    static let pollInterval: useconds_t = 250_000

    /// Set by SIGTERM or SIGHUP while the editor runs: stop it, clean up, then exit.
    nonisolated(unsafe) private static var stopRequested: sig_atomic_t = 0

    /// Runs the editor on `initial`; `save` is called with each new version of the text (it
    /// returns whether it wrote anything). Returns how many versions were written.
    static func edit(
        _ initial: String, allowDisk: Bool, environment: [String: String] = ProcessInfo.processInfo.environment,
        save: (String) throws -> Bool
    ) throws -> Int {
        let folder = try privateFolder(environment: environment, allowDisk: allowDisk)
        defer { wipe(folder) }
        let file = folder + "/note.txt"
        try create(file, with: initial)
        let editor = ["EDITOR", "VISUAL"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? "vi"
        return try watching(file, initial: initial, save: save) { try spawn(editor: editor, file: file) }
    }

    /// A new 0700 folder for the file, on a RAM-backed file system unless `allowDisk`.
    static func privateFolder(environment: [String: String], allowDisk: Bool) throws -> String {
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/dev/shm"
        guard let resolved = realpath(base, nil) else {
            throw CLIError(
                .cannotCreate, "Cannot edit the note: the folder for its plaintext, \(base), is not there.",
                hint: "Set XDG_RUNTIME_DIR to a RAM-backed folder (such as /dev/shm), or use --stdin.")
        }
        let path = String(cString: resolved)
        free(resolved)
        guard allowDisk || ramBackedFileSystems.contains(fileSystem(of: path) ?? "") else {
            throw CLIError(
                .cannotCreate,
                "Cannot edit the note: \(base) (XDG_RUNTIME_DIR) is on a disk, where its plaintext could be recovered after the edit. Nothing was written.",
                hint:
                    "Point XDG_RUNTIME_DIR at a RAM-backed folder (such as /dev/shm), use --stdin, or accept the risk with --allow-disk."
            )
        }
        var template = Array("\(base)/coffer-note-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CLIError(.cannotCreate, "Cannot edit the note: no private folder can be made in \(base).")
        }
        return String(cString: made)
    }

    /// The type of the file system `path` (absolute, resolved) is on, from the mount table: the
    /// mount point that is the longest prefix of it. (statfs's magic number is not visible from
    /// Swift on Linux.)
    static func fileSystem(of path: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        var best: (point: String, type: String)?
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count > 6, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { continue }
            // Spaces, tabs, newlines and backslashes in mount points are written as octal escapes.
            let point = fields[4].replacingOccurrences(of: "\\040", with: " ")
                .replacingOccurrences(of: "\\011", with: "\t").replacingOccurrences(of: "\\012", with: "\n")
                .replacingOccurrences(of: "\\134", with: "\\")
            let inside = point == "/" || path == point || path.hasPrefix(point + "/")
            if inside, point.count >= (best?.point.count ?? -1) { best = (point, fields[dash + 1]) }
        }
        return best?.type
    }

    private static func create(_ path: String, with text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CLIError(.cannotCreate, "Cannot edit the note: its file cannot be made.") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw CLIError(.ioError, "Cannot edit the note: writing its file failed.")
        }
    }

    /// Runs `start`'s child to its end, saving each new version of `file` meanwhile and once more
    /// after. Ctrl-C and Ctrl-\ go to the editor alone (as `system` does); SIGTERM and SIGHUP stop it.
    private static func watching(
        _ file: String, initial: String, save: (String) throws -> Bool, start: () throws -> pid_t
    ) throws -> Int {
        let previous =
            [SIGINT, SIGQUIT].map { ($0, signal($0, SIG_IGN)) }
            + [SIGTERM, SIGHUP].map { ($0, signal($0) { _ in NoteEditor.stopRequested = 1 }) }
        defer { for (number, handler) in previous { signal(number, handler) } }
        let child = try start()
        var last = initial, saves = 0
        var status: Int32 = 0
        while waitpid(child, &status, WNOHANG) == 0 {
            if stopRequested != 0 {
                kill(child, SIGTERM)
                while waitpid(child, &status, 0) < 0, errno == EINTR {}
                throw CLIError(
                    .failure, "Stopped: the editor was ended. The note holds the last version it saved.")
            }
            // A version the vault refuses (a control character, too long) waits for the next save;
            // the last one is checked again below, where a refusal is said.
            if let text = read(file), text != last, let wrote = try? save(text) {
                if wrote { saves += 1 }
                last = text
            }
            usleep(pollInterval)
        }
        if let text = read(file), text != last, try save(text) { saves += 1 }
        let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard exited == 0 else {
            throw CLIError(
                .failure,
                "The editor exited with status \(exited). The note holds the last version it saved (\(saves) save\(saves == 1 ? "" : "s"))."
            )
        }
        return saves
    }

    /// The file's text, or nil while it is missing (an editor replacing it) or not UTF-8.
    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// `/bin/sh -c '$EDITOR "$1"'`, so an editor given with arguments (`code --wait`) works, on
    /// this terminal, with the default handling of the signals this process ignores meanwhile,
    /// and without Coffer's secrets (`COFFER_PASSPHRASE`, `COFFER_SESSION`) in its environment.
    private static func spawn(editor: String, file: String) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGQUIT, SIGTERM, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        // `exec`: the editor takes the shell's place, so a SIGTERM to it reaches the editor itself.
        let words: [String] = ["sh", "-c", "exec " + editor + " \"$1\"", "coffer-note", file]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = PassphraseSource.environmentWithoutSecrets.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, envp)
        guard result == 0 else {
            throw CLIError(.failure, "Cannot start the editor (\(String(cString: strerror(result)))).")
        }
        return pid
    }

    /// Overwrites every file in `folder` with zeros, syncs and removes it, then the folder:
    /// called on every way out of `edit`, error or not.
    static func wipe(_ folder: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names {
            let path = folder + "/" + name
            let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
            if descriptor >= 0 {
                var info = stat()
                if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                    let zeros = [UInt8](repeating: 0, count: 65_536)
                    var left = Int(info.st_size)
                    while left > 0 {
                        let wrote = zeros.withUnsafeBytes { write(descriptor, $0.baseAddress, min(left, $0.count)) }
                        guard wrote > 0 else { break }
                        left -= wrote
                    }
                    fsync(descriptor)
                }
                close(descriptor)
            }
            try? FileManager.default.removeItem(atPath: path)
        }
        rmdir(folder)
    }
}
