/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1beta1

// Why the agent released an object instead of deleting it, when a Work let go of it
// (the Work was deleted, or no longer lists the object). A released object stays on
// the member cluster without Flotilla's annotation, labels and field ownership. The
// reasons label the agent's metric flotilla_agent_objects_released_total and are the
// reasons of the hub's ObjectsReleased Events.
const (
	// ReasonReleasedAbandon: the delete strategy's propagationPolicy is Abandon.
	ReasonReleasedAbandon = "Abandon"
	// ReasonReleasedTakenOver: the object existed on the member before the Work
	// applied it, and deleteStrategy.takenOver is Release.
	ReasonReleasedTakenOver = "TakenOver"
	// ReasonReleasedNamespaceInUse: the object is a Namespace that holds objects no
	// Work applied (or that the agent could not check); it is never deleted then.
	ReasonReleasedNamespaceInUse = "NamespaceInUse"
)

// EventReasonObjectsReleased is the reason of the hub's Event, on a Work and on its
// placement, listing the objects the member released instead of deleting them when
// the Work was deleted.
const EventReasonObjectsReleased = "ObjectsReleased"
