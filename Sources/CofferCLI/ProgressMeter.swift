import Foundation
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// Long work (import, backup, restore, rekey, sync, join) drawn on one line of standard error
/// at a terminal, as restic draws it: `Compressing 45% · about 3 s left`. Silent into a pipe or
/// file, and for work that ends within a third of a second. The layers below report through
/// `WorkProgress`; every line Coffer prints first wipes the meter's line.
final class ProgressMeter: @unchecked Sendable {
    static let shared = ProgressMeter()

    private let lock = NSLock()
    private var commandStarted = Date()
    private var stage: WorkProgress.Stage?
    private var stageStarted = Date()
    private var lastDrawn = Date.distantPast
    private var lastLine = ""
    private var showing = false

    /// Runs one command with the meter bound, when standard error is a terminal.
    func tracking<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard Terminal.standardErrorIsTerminal else { return try body() }
        lock.withLock {
            commandStarted = Date()
            stage = nil
        }
        defer { clearLine() }
        return try WorkProgress.reporting(to: { [self] in update($0, $1, $2) }) { try body() }
    }

    /// Wipes the meter's line, so that what is printed next starts at the left edge.
    func clearLine() {
        lock.withLock {
            guard showing else { return }
            Terminal.writeError("\r\u{1B}[K")
            showing = false
        }
    }

    private func update(_ stage: WorkProgress.Stage, _ completed: Int, _ total: Int) {
        lock.withLock {
            let now = Date()
            if stage != self.stage {
                self.stage = stage
                stageStarted = now
            }
            guard total > 0, now.timeIntervalSince(commandStarted) >= 0.3,
                now.timeIntervalSince(lastDrawn) >= 0.1 || completed == total
            else { return }
            // The same words again (a stage sitting at 100%) are not redrawn.
            let line = Self.line(stage, completed, total, elapsed: now.timeIntervalSince(stageStarted))
            guard line != lastLine || !showing else { return }
            lastDrawn = now
            lastLine = line
            Terminal.writeError("\r\u{1B}[K" + line)
            showing = true
        }
    }

    /// `Encrypting 45% · about 3 s left`: the estimate once there is enough to go on (2% done
    /// and half a second spent), from this stage's pace so far.
    static func line(_ stage: WorkProgress.Stage, _ completed: Int, _ total: Int, elapsed: TimeInterval) -> String {
        let fraction = min(1, Double(completed) / Double(total))
        var text = "… \(stage.rawValue) \(Int(fraction * 100))%"
        if fraction >= 0.02, fraction < 1, elapsed >= 0.5 {
            let left = elapsed / fraction - elapsed
            text +=
                " · about \(left < 60 ? "\(max(1, Int(left.rounded()))) s" : "\(Int((left / 60).rounded())) min") left"
        }
        return text
    }
}
