// crystalbench review: keyboard shortcuts, image zoom, and small helpers. Plain JavaScript,
// no build step, no inline script (the Content-Security-Policy forbids it). Text is never
// inserted as HTML: only attributes, classes and textContent change.
"use strict";

(function () {
  const loadedAt = Date.now();
  let submitting = false;

  function visible(element) {
    return !!(element.offsetWidth || element.offsetHeight || element.getClientRects().length);
  }

  function typing(target) {
    if (!target || !target.tagName) return false;
    const tag = target.tagName.toLowerCase();
    if (tag === "textarea" || tag === "select") return true;
    if (tag !== "input") return target.isContentEditable;
    const type = (target.type || "text").toLowerCase();
    return !["checkbox", "radio", "button", "submit", "reset"].includes(type);
  }

  function say(text) {
    let box = document.querySelector("[data-hint]");
    if (!box) {
      box = document.createElement("p");
      box.className = "message error";
      box.setAttribute("role", "alert");
      box.setAttribute("data-hint", "");
      const work = document.querySelector(".work") || document.querySelector("main");
      work.insertBefore(box, work.firstChild);
    }
    box.textContent = text;
  }

  // ------------------------------------------------------------------ forms

  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form.hasAttribute("data-download")) return; // stays on this page
    if (submitting) {
      event.preventDefault();
      return;
    }
    const submitter = event.submitter;
    if (submitter && submitter.hasAttribute("data-accept")) {
      // Accept with steps flagged or a reject reason chosen contradicts itself: ask first
      // (the server asks too, for a page without this script).
      const conflict = acceptConflict(form);
      if (conflict) {
        event.preventDefault();
        const box = form.querySelector("[data-confirm-accept]");
        box.querySelector("[data-confirm-text]").textContent =
          "You pressed Accept, but " + conflict + ". Accept anyway (step flags are kept with " +
          "your review, a reject reason is dropped), or reject the chain, or clear them first.";
        box.hidden = false;
        box.querySelector("button[name=confirm_accept]").focus();
        return;
      }
    }
    if (submitter && submitter.hasAttribute("data-needs-reason")) {
      const chosen = form.querySelector("input[name=reason]:checked");
      if (!chosen) {
        event.preventDefault();
        say("Choose a reason for the rejection first (keys 1-7).");
        const first = form.querySelector("input[name=reason]");
        if (first) first.focus();
        return;
      }
    }
    const duration = form.querySelector("input[name=duration_ms]");
    if (duration) duration.value = String(Date.now() - loadedAt);
    submitting = true;
    document.body.classList.add("sending");
  });

  function acceptConflict(form) {
    const flagged = [];
    document.querySelectorAll("[data-chain] .chain-step").forEach(function (step, i) {
      if (step.querySelector("input[data-flag]:checked")) flagged.push(String(i + 1));
    });
    const parts = [];
    if (flagged.length) {
      const listed = flagged.length === 1 ? flagged[0]
        : flagged.slice(0, -1).join(", ") + " and " + flagged[flagged.length - 1];
      parts.push((flagged.length === 1 ? "step " : "steps ") + listed +
        (flagged.length === 1 ? " is" : " are") + " flagged");
    }
    const reason = form.querySelector("input[name=reason]:checked");
    if (reason) {
      const label = reason.closest("label");
      const text = label ? label.textContent.replace(/^\s*\d+\s*/, "").trim() : reason.value;
      parts.push("the reject reason '" + text + "' is chosen");
    }
    return parts.join(" and ");
  }

  document.querySelectorAll("[data-confirm-cancel]").forEach(function (button) {
    button.addEventListener("click", function () {
      const box = button.closest("[data-confirm-accept]");
      box.hidden = true;
      const accept = document.querySelector("[data-accept]");
      if (accept) accept.focus();
    });
  });

  // ------------------------------------------------------------------ chain steps

  const steps = Array.from(document.querySelectorAll("[data-chain] .chain-step"));
  let current = 0;

  function focusStep(index) {
    if (!steps.length) return;
    current = Math.max(0, Math.min(steps.length - 1, index));
    steps.forEach(function (step, i) {
      step.classList.toggle("current", i === current);
    });
    steps[current].scrollIntoView({ block: "nearest" });
  }

  steps.forEach(function (step, i) {
    step.addEventListener("click", function () {
      focusStep(i);
    });
  });
  if (steps.length && document.querySelector("#chain-form")) focusStep(0);

  function toggleFlag(flag) {
    if (!steps.length) return false;
    const box = steps[current].querySelector('input[data-flag="' + flag + '"]');
    if (!box) return false;
    box.checked = !box.checked;
    return true;
  }

  // ------------------------------------------------------------------ keyboard

  const chainKeys = { v: "not_visible", u: "unjustified", w: "wrong" };

  document.addEventListener("keydown", function (event) {
    if (submitting) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (typing(event.target)) {
      if (key === "Escape") event.target.blur();
      if (key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.form) {
        event.preventDefault();
        const form = event.target.form;
        const primary = form.querySelector("[data-key~=Enter]") || form.querySelector("button[type=submit]");
        if (primary && form.id !== "chain-form") primary.click();
        else say("Press A to accept or R to reject.");
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (zoomKeys(key)) {
      event.preventDefault();
      return;
    }
    const isChain = !!document.querySelector("#chain-form");
    if (isChain) {
      if (key === "j" || key === "ArrowDown") { event.preventDefault(); focusStep(current + 1); return; }
      if (key === "k" || key === "ArrowUp") { event.preventDefault(); focusStep(current - 1); return; }
      if (chainKeys[key] && toggleFlag(chainKeys[key])) { event.preventDefault(); return; }
      if (key === "n") {
        const note = document.querySelector("[data-note]");
        if (note) { event.preventDefault(); note.focus(); return; }
      }
    }
    const targets = Array.from(document.querySelectorAll("[data-key]")).filter(function (element) {
      return element.getAttribute("data-key").split(" ").includes(key) && visible(element);
    });
    if (!targets.length) return;
    event.preventDefault();
    targets[0].click();
  });

  // ------------------------------------------------------------------ help

  document.querySelectorAll("[data-help-toggle]").forEach(function (button) {
    button.addEventListener("click", function () {
      const help = document.querySelector("[data-help]");
      if (help) help.hidden = !help.hidden;
    });
  });

  // ------------------------------------------------------------------ zoom

  const figure = document.querySelector("[data-zoom]");
  let zoom = null;

  function zoomKeys(key) {
    if (!zoom) return false;
    if (key === "+" || key === "=") { zoom.by(1.25); return true; }
    if (key === "-" || key === "_") { zoom.by(0.8); return true; }
    if (key === "0") { zoom.reset(); return true; }
    if (key === "z") { zoom.toggle(); return true; }
    return false;
  }

  if (figure) {
    const view = figure.querySelector(".zoom-view");
    const image = figure.querySelector("img");
    const state = { scale: 1, x: 0, y: 0 };
    const pointers = new Map();
    let pinch = null;

    function apply() {
      image.style.transform = "translate(" + state.x + "px, " + state.y + "px) scale(" + state.scale + ")";
      figure.classList.toggle("zoomed", state.scale > 1.001);
    }

    function around(factor, cx, cy) {
      const next = Math.max(1, Math.min(12, state.scale * factor));
      const real = next / state.scale;
      state.x = cx - (cx - state.x) * real;
      state.y = cy - (cy - state.y) * real;
      state.scale = next;
      if (state.scale === 1) { state.x = 0; state.y = 0; }
      apply();
    }

    zoom = {
      by: function (factor) { around(factor, view.clientWidth / 2, view.clientHeight / 2); },
      reset: function () { state.scale = 1; state.x = 0; state.y = 0; apply(); },
      toggle: function () { if (state.scale > 1) zoom.reset(); else zoom.by(2); },
    };

    figure.querySelectorAll("[data-zoom-step]").forEach(function (button) {
      button.addEventListener("click", function () { zoom.by(parseFloat(button.getAttribute("data-zoom-step"))); });
    });
    const reset = figure.querySelector("[data-zoom-reset]");
    if (reset) reset.addEventListener("click", zoom.reset);

    view.addEventListener("wheel", function (event) {
      event.preventDefault();
      const box = view.getBoundingClientRect();
      around(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX - box.left, event.clientY - box.top);
    }, { passive: false });

    view.addEventListener("dblclick", function (event) {
      const box = view.getBoundingClientRect();
      if (state.scale > 1) zoom.reset(); else around(2, event.clientX - box.left, event.clientY - box.top);
    });

    view.addEventListener("pointerdown", function (event) {
      view.setPointerCapture(event.pointerId);
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 2) {
        const [a, b] = Array.from(pointers.values());
        pinch = { distance: Math.hypot(a.x - b.x, a.y - b.y) };
      }
    });
    view.addEventListener("pointermove", function (event) {
      const last = pointers.get(event.pointerId);
      if (!last) return;
      const now = { x: event.clientX, y: event.clientY };
      pointers.set(event.pointerId, now);
      if (pointers.size === 2 && pinch) {
        const [a, b] = Array.from(pointers.values());
        const distance = Math.hypot(a.x - b.x, a.y - b.y);
        const box = view.getBoundingClientRect();
        if (pinch.distance > 0) around(distance / pinch.distance, (a.x + b.x) / 2 - box.left, (a.y + b.y) / 2 - box.top);
        pinch.distance = distance;
      } else if (state.scale > 1) {
        state.x += now.x - last.x;
        state.y += now.y - last.y;
        apply();
      }
    });
    function release(event) {
      pointers.delete(event.pointerId);
      if (pointers.size < 2) pinch = null;
    }
    view.addEventListener("pointerup", release);
    view.addEventListener("pointercancel", release);
  }

  document.documentElement.setAttribute("data-ready", "1");
})();
