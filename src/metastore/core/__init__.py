"""The shared vocabulary: what every part of the project means by a table, a partition name, an event and an
error. Only definitions and pure functions live here (no I/O, no store, no server), and every other package
imports them rather than writing its own: the model, Hive's names and partition-name escaping, event types,
the notification messages (written and read) and the error types."""
