import CofferTestSupport
import Foundation
import Testing

/// A real sync engine (Tests/Syncthing/two_devices.py): two Syncthing instances on loopback
/// carry one vault's folder between two devices through three simulated days, one of them
/// apart, with Syncthing's conflict copies and temporary files in the folder; both devices end
/// with the same vault and every acknowledged change. `scripts/reliability sync` runs a week.
/// scripts/setup installs Debian's syncthing; without it this test fails, it never skips.
@Suite struct SyncthingTests {
    @Test func twoDevicesThroughSyncthingConverge() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Syncthing/two_devices.py").standardized
        let sandbox = Sandbox()
        let log = sandbox.directory.path("syncthing.txt")
        let status = try sandbox.runTool(
            "/bin/sh",
            [
                "-c", "python3 \"$0\" \"$1\" --days 3 --work \"$2\" > \"$3\" 2>&1", script.path, cofferBinary.path,
                sandbox.directory.path("work").path, log.path,
            ])
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(output)")
        #expect(output.contains("all passed"), "\(output)")
    }
}
