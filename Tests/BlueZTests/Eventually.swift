/// Polls `condition` every 10 ms for up to 10 s; returns whether it came to hold.
func eventually(_ condition: () async -> Bool) async throws -> Bool {
  for _ in 0..<1000 {
    if await condition() { return true }
    try await Task.sleep(for: .milliseconds(10))
  }
  return await condition()
}
