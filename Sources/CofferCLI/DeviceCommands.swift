import ArgumentParser
import CofferKit
import Foundation
import VaultStore

/// `coffer device …`: the devices that share this vault through its sync folder.
struct DeviceCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Join this machine to a vault's sync folder, or list its devices.",
        subcommands: [DeviceJoin.self, DeviceList.self, DeviceRemove.self])

    static var hostName: String {
        let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        return name.isEmpty ? "device" : name
    }

    /// "3 min ago", "2 days ago".
    static func ago(_ date: Date) -> String { SyncStatus.ago(date) }
}

struct DeviceJoin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Build this machine's copy of a vault from its sync folder alone (asks for the vault's passphrase).")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The sync folder another device made with `coffer sync init`.") var folder: String
    @Option(help: "This device's name, shown on the others (default: the host name).") var name: String?

    func run() throws {
        let url = URL(fileURLWithPath: folder).standardizedFileURL
        let destination = options.vaultURL
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw CLIError(
                .invalidInput, "A vault already exists at \(destination.path); nothing was changed.",
                hint:
                    "Join into another path with --vault PATH, or sync the vault that is there: coffer sync \(url.path)"
            )
        }
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let credential = try options.credential(
            allowSession: false, prompt: "Passphrase of the vault in \(url.path): ")
        let joined = try SyncService.joinCopy(
            folder: url, vault: destination, credential: credential, deviceName: name ?? DeviceCommands.hostName,
            guard: options.rollbackGuard)
        let report = joined.report
        Output.line(
            "Joined: \(destination.path) now holds the vault (\(joined.recordCount) records), as device '\(joined.deviceName)'."
        )
        Output.line("It opens with the same passphrase. Run coffer sync to publish and merge from now on.")
        SyncCommands.show(report)
        try SyncCommands.finish(report)
    }
}

struct DeviceList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The devices sharing this vault, and when each was last heard from.")
    @OptionGroup var options: VaultOptions
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() throws {
        let ledger = try options.openLedger()
        let status = try SyncService.status(ledger)
        if json { return try Output.json(["devices": SyncJSON.Status(status).devices]) }
        let rows = status.devices.map {
            [
                $0.name + ($0.isThisDevice ? " (this device)" : ""), String($0.id.prefix(8)),
                $0.lastHeard.map(DeviceCommands.ago) ?? "never",
            ]
        }
        Render.table([["DEVICE", "ID", "LAST HEARD FROM"]] + rows).forEach { Output.line($0) }
    }
}

struct DeviceRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Shut a device out (lost, stolen, sold): new keys it never gets (needs the passphrase).",
        discussion: """
            Syncs, replaces the vault's master key and starts the folder's next epoch under it: the removed device \
            can neither read nor write anything published from now on. The other devices take on the new keys at \
            their next coffer sync, with the passphrase. If the removed device's holder may know the passphrase, \
            change it too: coffer passphrase change (then coffer sync).
            """)
    @OptionGroup var options: VaultOptions
    @Argument(help: "The device's name, as coffer device list shows it.") var name: String

    func run() throws {
        let passphrase = try options.vaultPassphrase()
        let ledger = try Ledger(
            vault: Vault.open(at: options.vaultURL, with: .passphrase(passphrase), guard: options.rollbackGuard))
        let rotation = try SyncService.removeDevice(named: name, from: ledger)
        Output.line(
            "Removed \(rotation.removed ?? name): the vault's keys were replaced (key generation \(rotation.generation)); it cannot read or write anything published from now on."
        )
        SyncCommands.show(rotation.report)
        Terminal.note(
            "hint: Each other device takes on the new keys at its next coffer sync (with the passphrase). If the removed device's holder may know the passphrase, also run: coffer passphrase change"
        )
        try SyncCommands.finish(rotation.report)
    }
}
