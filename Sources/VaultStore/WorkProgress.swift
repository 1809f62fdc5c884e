/// How far long work has gone (encrypting a restored vault, re-encrypting at a rekey,
/// compressing an archive), for a front end to show as a percentage. The layers that do the work
/// report through the handler bound for the current task; they never print. Work done on other
/// threads reports through a handler read before it starts (task-local values stay on the task).
public enum WorkProgress {
    public enum Stage: String, Sendable {
        case reading = "Reading"
        case checking = "Checking"
        case encrypting = "Encrypting"
        case writing = "Writing"
        case reencrypting = "Re-encrypting"
        case compressing = "Compressing"
        case decompressing = "Decompressing"
    }

    public typealias Handler = @Sendable (_ stage: Stage, _ completed: Int, _ total: Int) -> Void

    @TaskLocal public static var handler: Handler?

    /// Reports every `every`th unit and the last, so the cost stays out of tight loops.
    @inline(__always)
    package static func report(_ stage: Stage, _ completed: Int, of total: Int, every: Int = 1024) {
        guard completed == total || completed % every == 0, let handler else { return }
        handler(stage, completed, total)
    }
}
