/// How far long work has gone (encrypting a restored vault, re-encrypting at a rekey,
/// compressing an archive), for a front end to show as a percentage. The layers that do the work
/// report through the handler bound for the current task (`reporting(to:_:)`); they never print.
/// Work on other threads does not report: task-local values stay on the task.
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

    /// The handler in a class: Swift 6.3's runtime crashes binding a task-local whose value is an
    /// optional closure in an optimised build (`swift_task_localValuePush`, every release
    /// command at a terminal); a class reference binds fine.
    final class Binding: Sendable {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }

    @TaskLocal static var binding: Binding?

    /// Runs `body` with `handler` receiving the progress of the work it does on this task.
    public static func reporting<Result>(to handler: @escaping Handler, _ body: () throws -> Result) rethrows
        -> Result
    {
        try $binding.withValue(Binding(handler), operation: body)
    }

    /// Reports every `every`th unit and the last, so the cost stays out of tight loops.
    @inline(__always)
    package static func report(_ stage: Stage, _ completed: Int, of total: Int, every: Int = 1024) {
        guard completed == total || completed % every == 0, let binding else { return }
        binding.handler(stage, completed, total)
    }
}
