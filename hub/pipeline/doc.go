// Package pipeline holds what the controllers of the placement pipeline share:
// which binding is active, which resource and policy snapshots are the latest,
// the field managers, the cache indexes, and the one way a controller writes its
// own conditions on a binding (server-side apply of the status subresource, so
// that no controller overwrites another's conditions and none needs to retry on
// a conflict).
//
// Which controller owns which field of which object, and what wakes each, is
// written down in docs/concepts/pipeline.md; a controller writes nothing else.
package pipeline
