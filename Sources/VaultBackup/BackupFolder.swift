import Foundation

/// A folder of archives judged by what is signed, never by file names: synced folders hold
/// copies a sync tool renamed (`X (1).cbak`, `X (conflicted copy …).cbak`, `X.sync-conflict-…`),
/// and two copies of one vault may both back up there.
public enum BackupFolder {
    public struct Entry: Sendable {
        public let url: URL
        public let size: Int
        /// Set when a trusted key signed the file and its structure is intact.
        public let info: ArchiveInfo?
        public let status: Status
    }

    public enum Status: Sendable, Equatable {
        /// A distinct archive of this vault: the one retention counts.
        case signed
        /// The same signed bytes as `of` (which is the one counted): never takes a keep slot.
        case copy(of: URL)
        /// Signed, but another archive of this vault carries the same sequence number with other
        /// content: two copies of the vault backed up here. Listed, never pruned.
        case fork(with: [URL])
        /// Signed by a key that is not one of this vault's.
        case foreign
        /// No signature file beside it.
        case unsigned
        /// Fails its signature or structure.
        case damaged(String)
        /// A newer archive format than this Coffer reads.
        case newerFormat

        /// The word `backup list --json` uses.
        public var name: String {
            switch self {
            case .signed: "signed"
            case .copy: "copy"
            case .fork: "fork"
            case .foreign: "foreign"
            case .unsigned: "unsigned"
            case .damaged: "damaged"
            case .newerFormat: "newer format"
            }
        }
    }

    /// Every `.cbak` in `folder`, checked against `trust` (streamed: memory stays bounded), with
    /// copies grouped by signed content. Of identical files, the one still under the name it was
    /// signed as is the archive; the others are copies.
    public static func scan(_ folder: URL, trust: ArchiveTrust) -> [Entry] {
        var checked: [(url: URL, size: Int, result: Result<ArchiveInfo, BackupError>)] = []
        for name in Archive.archiveNames(in: folder) {
            let url = folder.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            do {
                checked.append((url, size, .success(try Archive.verify(at: url, trust: trust))))
            } catch let error as BackupError {
                checked.append((url, size, .failure(error)))
            } catch {
                checked.append((url, size, .failure(BackupError(.damaged, "\(name) cannot be read."))))
            }
        }
        let signed = checked.compactMap { entry -> ArchiveInfo? in
            if case .success(let info) = entry.result { info } else { nil }
        }
        var representative: [[UInt8]: URL] = [:]
        for info in signed.sorted(by: {
            ($0.hasSignedName ? 0 : 1, $0.url.lastPathComponent) < ($1.hasSignedName ? 0 : 1, $1.url.lastPathComponent)
        })
        where representative[info.digest] == nil {
            representative[info.digest] = info.url
        }
        let distinct = signed.filter { representative[$0.digest] == $0.url }
        let bySequence = Dictionary(grouping: distinct, by: \.sequence)

        return checked.map { url, size, result in
            switch result {
            case .success(let info):
                if let original = representative[info.digest], original != url {
                    return Entry(url: url, size: size, info: info, status: .copy(of: original))
                }
                let others = (bySequence[info.sequence] ?? []).filter { $0.url != url }.map(\.url)
                return Entry(url: url, size: size, info: info, status: others.isEmpty ? .signed : .fork(with: others))
            case .failure(let error):
                let status: Status
                switch error.code {
                case .untrusted:
                    status =
                        FileManager.default.fileExists(atPath: Archive.signatureURL(for: url).path)
                        ? .foreign : .unsigned
                case .unsupported: status = .newerFormat
                default: status = .damaged(error.errorDescription ?? "damaged")
                }
                return Entry(url: url, size: size, info: nil, status: status)
            }
        }
    }
}
