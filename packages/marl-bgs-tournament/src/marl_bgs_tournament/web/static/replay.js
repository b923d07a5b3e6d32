// The replay viewer: fetches the game's JSON (the page's data-api; any mode, from its web part)
// and draws one tick at a time on the canvas; play/pause, one-tick steps, a slider, and ?tick=N
// to open at tick N. The key's colours (teams, Red Zone, health, shield, badges, the dead) come
// with the JSON, from the same legend the desktop clients draw; it may also set PLAIN's.
"use strict";

(function () {
  const PLAIN = { field: "#ece9e0", obstacle: "#3b3b3b", healthBack: "#464646", outline: "#ffffff",
    text: "#1e1e1e", mark: "#1e1e1e" };
  let COLOURS = null; // PLAIN and the JSON's legend colours
  const root = document.getElementById("replay");
  const canvas = document.getElementById("field");
  const ctx = canvas.getContext("2d");
  const slider = document.getElementById("slider");
  const play = document.getElementById("play");
  const tickLabel = document.getElementById("tick");
  const scoreLabel = document.getElementById("score");
  const status = document.getElementById("status");
  let game = null;
  let index = 0;
  let timer = null;

  function px(x) { return (x * canvas.width) / game.width; }
  function py(y) { return ((game.height - y) * canvas.height) / game.height; }

  function drawObstacle(o) {
    ctx.fillStyle = COLOURS.obstacle;
    ctx.beginPath();
    if (o.kind === "pillar") {
      ctx.arc(px(o.x), py(o.y), px(o.radius), 0, 2 * Math.PI);
    } else {
      const c = Math.cos(o.theta), s = Math.sin(o.theta), w = o.width / 2, h = o.height / 2;
      [[w, h], [-w, h], [-w, -h], [w, -h]].forEach(function ([u, v], k) {
        const x = px(o.x + c * u - s * v), y = py(o.y + s * u + c * v);
        if (k === 0) { ctx.moveTo(x, y); } else { ctx.lineTo(x, y); }
      });
      ctx.closePath();
    }
    ctx.fill();
  }

  function drawAura(u) {
    if (!u.alive || game.aura_classes.indexOf(u.class) < 0) { return; }
    ctx.strokeStyle = COLOURS.team[u.team];
    ctx.lineWidth = 1;
    ctx.setLineDash([5, 5]);
    ctx.beginPath();
    ctx.arc(px(u.x), py(u.y), px(game.aura_radius), 0, 2 * Math.PI);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  function drawBadges(u, x, y, r) {
    const size = Math.max(9, Math.round(r * 0.6));
    let left = x - (u.badges.length * size) / 2;
    ctx.font = "bold " + size + "px sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (const letter of u.badges) {
      ctx.fillStyle = COLOURS.badges[letter];
      ctx.fillRect(left, y + r + 2, size, size);
      ctx.fillStyle = PLAIN.text;
      ctx.fillText(letter, left + size / 2, y + r + 2 + size / 2 + 1);
      left += size;
    }
  }

  function drawMark(m) {
    ctx.strokeStyle = COLOURS.mark;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(px(m.x), py(m.y), px(m.radius), 0, 2 * Math.PI);
    ctx.stroke();
  }

  function drawUnit(u) {
    const r = px(game.body_radius), x = px(u.x), y = py(u.y);
    if (!u.alive) {
      ctx.strokeStyle = COLOURS.dead;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(x, y, r * 0.6, 0, 2 * Math.PI);
      ctx.stroke();
      return;
    }
    if (u.shield) {
      ctx.strokeStyle = COLOURS.shield;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.arc(x, y, r + 3, 0, 2 * Math.PI);
      ctx.stroke();
    }
    ctx.fillStyle = COLOURS.team[u.team];
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fill();
    ctx.strokeStyle = COLOURS.outline;
    ctx.lineWidth = 2;
    ctx.stroke();
    ctx.fillStyle = COLOURS.outline;
    ctx.font = "bold " + Math.round(r * 0.9) + "px sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(u.class, x, y + 1);
    const width = 2 * r, filled = width * Math.max(0, Math.min(1, u.health / u.max_health));
    ctx.fillStyle = COLOURS.healthBack;
    ctx.fillRect(x - r, y - r - 9, width, 5);
    ctx.fillStyle = COLOURS.health;
    ctx.fillRect(x - r, y - r - 9, filled, 5);
    drawBadges(u, x, y, r);
  }

  function draw() {
    const frame = game.frames[index];
    ctx.fillStyle = COLOURS.field;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    if (game.red_zone_depth > 0) {
      const w = px(game.red_zone_depth);
      ctx.fillStyle = COLOURS.redZone;
      ctx.fillRect(0, 0, w, canvas.height);
      ctx.fillRect(canvas.width - w, 0, w, canvas.height);
    }
    game.obstacles.forEach(drawObstacle);
    (game.marks || []).forEach(drawMark);
    frame.units.forEach(drawAura);
    frame.units.filter(function (u) { return !u.alive; }).forEach(drawUnit);
    frame.units.filter(function (u) { return u.alive; }).forEach(drawUnit);
    slider.value = String(index);
    tickLabel.textContent = "tick " + frame.tick + " of " + game.ticks;
    scoreLabel.textContent = frame.caption !== undefined ? frame.caption
      : "score " + frame.score[0] + " : " + frame.score[1];
    root.dataset.tick = String(frame.tick);
  }

  function show(k) {
    index = Math.max(0, Math.min(game.frames.length - 1, k));
    draw();
  }

  function pause() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    play.textContent = "▶ play";
  }

  function toggle() {
    if (timer !== null) { pause(); return; }
    if (index >= game.frames.length - 1) { show(0); }
    play.textContent = "⏸ pause";
    timer = setInterval(function () {
      if (index >= game.frames.length - 1) { pause(); return; }
      show(index + 1);
    }, 100);
  }

  function start(data) {
    game = data;
    COLOURS = Object.assign({}, PLAIN, data.colours);
    canvas.height = Math.round((canvas.width * game.height) / game.width); // the field's shape
    slider.max = String(game.frames.length - 1);
    const asked = Number.parseInt(new URLSearchParams(window.location.search).get("tick"), 10);
    const at = Number.isFinite(asked) ? game.frames.findIndex(function (f) { return f.tick === asked; }) : 0;
    show(at >= 0 ? at : Number.isFinite(asked) ? asked : 0);
    status.textContent = game.status;
    play.addEventListener("click", toggle);
    document.getElementById("back").addEventListener("click", function () { pause(); show(index - 1); });
    document.getElementById("forward").addEventListener("click", function () { pause(); show(index + 1); });
    slider.addEventListener("input", function () { pause(); show(Number(slider.value)); });
    root.dataset.ready = "yes";
  }

  fetch(root.dataset.api)
    .then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) { throw new Error(body.error || "the replay could not be read"); }
        return body;
      });
    })
    .then(start)
    .catch(function (err) {
      status.textContent = "This replay cannot be shown: " + err.message;
      status.className = "problem";
      root.dataset.ready = "error";
    });
}());
