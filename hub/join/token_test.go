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

package join

import (
	"strings"
	"testing"
	"time"
)

func TestTokenOptionsSayWhatATokenMayJoin(t *testing.T) {
	tests := []struct {
		name    string
		opts    TokenOptions
		wantErr string
	}{
		{"a token for one member", TokenOptions{TTL: time.Hour, Name: "member-1"}, ""},
		{"a re-join token for one member", TokenOptions{TTL: time.Hour, Name: "member-1", Rejoin: true}, ""},
		{"a token for any new name", TokenOptions{TTL: time.Hour, AnyName: true}, ""},
		{"a token needs a name or any-name", TokenOptions{TTL: time.Hour}, "--name is required"},
		{"a token is for one name or any, not both", TokenOptions{TTL: time.Hour, Name: "member-1", AnyName: true}, "exclude each other"},
		{"a re-join names its member", TokenOptions{TTL: time.Hour, AnyName: true, Rejoin: true}, "--rejoin needs --name"},
		{"a name must be a valid member name", TokenOptions{TTL: time.Hour, Name: "Member_1"}, "not a valid member name"},
		{"a token must live", TokenOptions{Name: "member-1"}, "--ttl must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}
