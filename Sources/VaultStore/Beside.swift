import Dispatch

/// Work done on another thread, started at once; `value` must be called once, before
/// anything the work reads goes (it waits, and gives what the work returned or threw).
package final class Beside<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Value, Error>?

    package init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global().async {
            self.result = Result { try work() }
            self.done.signal()
        }
    }

    package func value() throws -> Value {
        done.wait()
        return try result!.get()
    }
}
