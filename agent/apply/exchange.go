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

package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The exchange record: a ConfigMap in the record namespace that keeps when the
// agent sent the last heartbeat the hub acknowledged, so that an agent that
// restarts while cut off from the hub counts its fencing lease from then and
// not from its own start (agent/session, fence.go).
const (
	// ExchangeRecordName is the exchange record's name.
	ExchangeRecordName = "flotilla-last-exchange"
	// componentExchangeRecord is its app.kubernetes.io/component label; it is
	// not a Work record, so Inventory does not list it.
	componentExchangeRecord = "exchange-record"
	// dataSentAt is its key: the time, RFC 3339 with nanoseconds.
	dataSentAt = "sentAt"
)

// SaveLastExchange records that the hub acknowledged a heartbeat the agent
// sent at sentAt (the wall-clock time), creating the record namespace if
// needed.
func (a *Applier) SaveLastExchange(ctx context.Context, sentAt time.Time) error {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": ExchangeRecordName, "namespace": a.opts.Namespace,
			"labels": map[string]any{labelManagedBy: managedByAgent, labelComponent: componentExchangeRecord},
		},
		"data": map[string]any{dataSentAt: sentAt.UTC().Format(time.RFC3339Nano)},
	}}
	apply := func() error {
		_, err := a.dynamic.Resource(configMapGVR).Namespace(a.opts.Namespace).Apply(ctx, ExchangeRecordName, cm,
			metav1.ApplyOptions{FieldManager: a.opts.FieldManager, Force: true})
		return err
	}
	err := apply()
	if apierrors.IsNotFound(err) {
		if err := a.ensureRecordNamespace(ctx); err != nil {
			return err
		}
		err = apply()
	}
	if err != nil {
		return fmt.Errorf("failed to record the last exchange with the hub: %w", err)
	}
	return nil
}

// LastExchange returns the time SaveLastExchange last recorded; zero when
// there is none.
func (a *Applier) LastExchange(ctx context.Context) (time.Time, error) {
	cm, err := a.dynamic.Resource(configMapGVR).Namespace(a.opts.Namespace).Get(ctx, ExchangeRecordName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("failed to read the last exchange with the hub: %w", err)
	}
	s, _, _ := unstructured.NestedString(cm.Object, "data", dataSentAt)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("the record %s/%s of the last exchange with the hub has %s %q, not a time: %w", a.opts.Namespace, ExchangeRecordName, dataSentAt, s, err)
	}
	return t, nil
}
