import Foundation
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// A sync folder on disk (Specs/sync-format.md §2): a keys file per key generation, and a
/// directory per device holding its enrolment and its numbered change files. Coffer only ever
/// creates files here, each complete under its final name, and never rewrites or deletes one.
struct SyncFolder {
    let url: URL

    /// Change files are numbered per epoch, and an epoch is a key generation: when the vault's
    /// master key is replaced (`device remove`, rekey), the device that did it starts the new
    /// epoch by publishing the whole vault under the new keys, and every other device moves to
    /// it (Specs/sync-format.md §9). Files of older epochs are then deleted by their authors.
    let epoch: UInt32

    init(url: URL, epoch: UInt32) {
        self.url = url
        self.epoch = epoch
    }

    /// What the folder holds, by name alone (nothing is read or trusted yet).
    struct Listing {
        /// Keys files by key generation: one per distinct vault header of that generation (a
        /// passphrase change that keeps the master key makes a second).
        var keys: [UInt32: [URL]] = [:]
        var enrolments: [SyncDeviceID: [UInt32: URL]] = [:]
        /// Change files of the folder's epoch, per device, by sequence.
        var changes: [SyncDeviceID: [UInt64: URL]] = [:]
        /// Change files of every other epoch, per device.
        var otherEpochs: [UInt32: [SyncDeviceID: [URL]]] = [:]
        /// Files a sync tool made (conflict copies, `(1)` duplicates): never used.
        var copies: [String] = []
    }

    static let keysExtension = "cfkeys"
    static let fileExtension = "cfsync"

    /// `keys-GGGGGGGG-DDDDDDDD.cfkeys`: the generation, and the first 4 bytes of the header's
    /// BLAKE2b-256 in hex, so each distinct header of a generation has its own file.
    static func keysName(_ generation: UInt32, header: [UInt8]) -> String {
        "keys-" + digits(UInt64(generation), 8) + "-" + BLAKE2b.hash(header).prefix(4).hexString + "." + keysExtension
    }
    static func enrolmentName(_ generation: UInt32) -> String {
        "enrol-" + digits(UInt64(generation), 8) + "." + fileExtension
    }
    static func changesName(_ sequence: UInt64, epoch: UInt32) -> String {
        digits(UInt64(epoch), 8) + "-" + digits(sequence, 16) + "." + fileExtension
    }

    private static func digits(_ value: UInt64, _ count: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    /// `prefix` then exactly `count` decimal digits then `.ext`; nil for anything else.
    private static func number(in name: String, prefix: String, count: Int, ext: String) -> UInt64? {
        let suffix = "." + ext
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + count + suffix.count else {
            return nil
        }
        let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard middle.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(middle)
    }

    private static func keysGeneration(_ name: String) -> UInt32? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "keys", parts[2].count == 8 + 1 + keysExtension.count,
            parts[2].hasSuffix("." + keysExtension),
            parts[2].prefix(8).allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
            let generation = number(in: String(parts[1]) + ".x", prefix: "", count: 8, ext: "x")
        else { return nil }
        return UInt32(exactly: generation)
    }

    private static func epochAndSequence(_ name: String) -> (UInt32, UInt64)? {
        guard name.count == 8 + 1 + 16 + 1 + fileExtension.count, name.dropFirst(8).first == "-",
            let epoch = number(in: String(name.prefix(8)) + ".x", prefix: "", count: 8, ext: "x"),
            let sequence = number(in: String(name.dropFirst(9)), prefix: "", count: 16, ext: fileExtension)
        else { return nil }
        return (UInt32(exactly: epoch) ?? 0, sequence)
    }

    func device(_ device: SyncDeviceID) -> URL { url.appendingPathComponent(device.hex, isDirectory: true) }

    func list() throws -> Listing {
        let manager = FileManager.default
        let top: [String]
        do {
            top = try manager.contentsOfDirectory(atPath: url.path)
        } catch {
            throw CofferError(.fileNotFound, "The sync folder \(url.path) cannot be read.")
        }
        var listing = Listing()
        func isCoffersOwnKind(_ name: String) -> Bool {
            !name.hasPrefix(".")
                && (name.hasSuffix("." + Self.fileExtension) || name.hasSuffix("." + Self.keysExtension))
        }
        for name in top {
            if let generation = Self.keysGeneration(name) {
                listing.keys[generation, default: []].append(url.appendingPathComponent(name))
            } else if let device = SyncDeviceID(hex: name), device.hex == name {
                let directory = url.appendingPathComponent(name, isDirectory: true)
                // Only a real directory: a link would lead reads, and a device's removal of what
                // was planted under its names, into another device's directory or out of the folder.
                guard Self.isRealDirectory(directory),
                    let entries = try? manager.contentsOfDirectory(atPath: directory.path)
                else { continue }
                for entry in entries {
                    if let generation = Self.number(in: entry, prefix: "enrol-", count: 8, ext: Self.fileExtension),
                        let generation = UInt32(exactly: generation)
                    {
                        listing.enrolments[device, default: [:]][generation] = directory.appendingPathComponent(entry)
                    } else if let (epoch, sequence) = Self.epochAndSequence(entry), sequence > 0 {
                        if epoch == self.epoch {
                            listing.changes[device, default: [:]][sequence] = directory.appendingPathComponent(entry)
                        } else {
                            listing.otherEpochs[epoch, default: [:]][device, default: []].append(
                                directory.appendingPathComponent(entry))
                        }
                    } else if isCoffersOwnKind(entry) {
                        listing.copies.append(name + "/" + entry)
                    }
                }
            } else if isCoffersOwnKind(name) {
                listing.copies.append(name)
            }
        }
        listing.copies.sort()
        for generation in listing.keys.keys { listing.keys[generation]!.sort { $0.path < $1.path } }
        return listing
    }

    /// Deletes the temporary files a publish of `device`'s that was killed left in its own
    /// directory (`.NAME.RANDOM.tmp`, never read by anyone). Only those older than `age`: a
    /// younger one may be another sync of this device, publishing right now.
    func removeLeftoverTemporaries(of device: SyncDeviceID, olderThan age: TimeInterval, now: Date) {
        let directory = self.device(device)
        guard Self.isRealDirectory(directory),
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return }
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            let file = directory.appendingPathComponent(name)
            guard
                let modified = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate]
                    as? Date,
                now.timeIntervalSince(modified) > age
            else { continue }
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// Reads a file Coffer wrote, refusing one larger than any Coffer writes, and anything but a
    /// regular file: a directory, a link (to a device, a pipe that never ends, a file elsewhere)
    /// or a pipe under a Coffer name is refused without being followed or waited on.
    static func read(_ file: URL, limit: Int = SyncEnvelope.maximumByteCount) throws(SyncFileProblem) -> [UInt8] {
        let descriptor = Glibc.open(file.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            // ELOOP: the name is a symbolic link. Gone since the listing: a sync tool at work.
            if errno == ELOOP { throw .notAFile }
            throw .incomplete
        }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .incomplete }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notAFile }
        guard status.st_size <= limit else { throw .damaged }
        // An empty file reads as nothing: a sync tool that has made the name but written nothing yet.
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }  // cut short while being read: what there is
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    /// Frees a name of this device's own that a planted file took: unlinked (a link itself,
    /// never what it points to), or a directory moved aside under a hidden name no one reads.
    static func free(_ name: URL) {
        guard Glibc.unlink(name.path) != 0, errno == EISDIR || errno == EPERM else { return }
        let aside = name.deletingLastPathComponent().appendingPathComponent(
            ".\(name.lastPathComponent).planted-\(SecureRandom.bytes(count: 6).hexString)")
        Glibc.rename(name.path, aside.path)
    }

    static func isRealDirectory(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Publishes a new file; `EEXIST` means the name is taken (never overwritten). A device's
    /// own directory that is not a directory (a file, a link planted in its place) is moved
    /// aside first, under a hidden name no one reads.
    func publish(_ bytes: [UInt8], named name: String, in device: SyncDeviceID?) throws {
        var directory = url
        if let device {
            directory = self.device(device)
            var status = stat()
            if lstat(directory.path, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
                let aside = url.appendingPathComponent(
                    ".\(device.hex).planted-\(SecureRandom.bytes(count: 6).hexString)")
                Glibc.rename(directory.path, aside.path)
            }
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw CofferError(.failed, "Could not create \(directory.path) in the sync folder.")
            }
        }
        let target = directory.appendingPathComponent(name)
        do {
            try DurableFile.publish(target, containing: bytes)
        } catch let error where error.code == .EEXIST {
            throw CofferError(
                .alreadyExists, "\(target.path) already exists: another sync from this device may be running.")
        } catch {
            throw CofferError(.failed, "Could not write \(target.path): \(error.localizedDescription).")
        }
    }
}
