// Live updates of the Flotilla console. The console tells the page on /live
// (server-sent events, from watches it keeps with the user's credentials) each
// time the fleet changes; the page then reloads every element that has a
// data-live attribute from that attribute's URL. Every page works without this
// script: it only saves a reload.
(function () {
  'use strict';
  var parts = document.querySelectorAll('[data-live]');
  if (!parts.length || !window.EventSource) {
    return;
  }
  var status = document.getElementById('live-status');
  var busy = false;
  var again = false;

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  function load(el) {
    return fetch(el.getAttribute('data-live'), { headers: { Accept: 'text/html' } })
      .then(function (r) {
        if (!r.ok) {
          throw new Error(r.status + ' ' + r.statusText);
        }
        return r.text();
      })
      .then(function (html) {
        el.innerHTML = html;
      });
  }

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    Promise.all(Array.prototype.map.call(parts, load))
      .then(function () { say('live'); }, function (e) { say('not live: ' + e.message); })
      .then(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  var events = new EventSource('/live');
  events.addEventListener('change', refresh);
  events.onopen = function () { say('live'); };
  events.onerror = function () { say('reconnecting…'); };
})();
