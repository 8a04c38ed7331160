// Package resources watches every kind on the hub that a placement may select and
// answers resource selectors from those caches. It finds kinds by discovery (and
// again periodically, so a CRD installed later becomes selectable), skips kinds
// and objects that must never be copied to a member, and tells its subscribers
// about every change so that placements see edits to what they selected.
package resources
