#!/usr/bin/env node
/*
 * Join a live dbgctl session from an IDE's debug adapter: Eclipse CDT's
 * cdt-gdb-adapter (the adapter of VS Code's CDT GDB extension), driven by
 * @vscode/debugadapter-testsupport's DebugClient as VS Code would drive it,
 * with dbgctl-gdb as its "gdb".
 *
 *     node join.js PLAN
 *
 * PLAN is one JSON object:
 *   adapter     the adapter's dist/debugAdapter.js
 *   gdb         the "gdb" the adapter runs (dbgctl-gdb, or tee-gdb)
 *   env         environment for the adapter (DBGCTL_SESSION, DBGCTL_SOCKET)
 *   attach      the attach request's arguments beside "gdb": for a native
 *               session processId, the program's pid (the adapter writes
 *               -target-attach PID, which dbgctl answers ^done for the
 *               session's own program); for a remote or qemu session none
 *               (it writes "-target-attach undefined", which attaches to
 *               what the session has); program, the session's own file,
 *               is answered ^done too
 *   function    the function breakpoint's name
 *   source, line  the line breakpoint
 *   evaluate    expressions evaluated in the top frame at each stop
 *   timeout     ms to wait for any one response or event (default 30000)
 *
 * The sequence: initialize, attach, setBreakpoints (the line) and
 * setFunctionBreakpoints, configurationDone, a first stop, stackTrace,
 * scopes, variables, evaluate, continue, a second stop, the same look
 * again, disconnect. At each stop it writes {"pause":"stop1"} (or "stop2")
 * on stdout and waits for a line on stdin, so that the rig driving the
 * same session can act while the IDE holds it. The last line on stdout is
 * {"summary":{...}}: every step with its success and what the test checks.
 * Its exit status is 0 when every step succeeded.
 */
'use strict';

const path = require('path');
const readline = require('readline');

const plan = JSON.parse(process.argv[2] || '{}');
/* DebugClient is in the node_modules that holds the adapter. */
const { DebugClient } = require(require.resolve(
    '@vscode/debugadapter-testsupport',
    { paths: [path.dirname(path.dirname(plan.adapter || '.'))] }));

const bound = plan.timeout || 30000;
const steps = [];
const stops = [];
const outputs = [];
let stopWaiter = null;

/* Write one JSON line on stdout. */
function joinSay(obj) {
	process.stdout.write(JSON.stringify(obj) + '\n');
}

const stdinLines = readline.createInterface({ input: process.stdin });
const stdinQueue = [];
let stdinWaiter = null;
stdinLines.on('line', (l) => {
	if (stdinWaiter) {
		const w = stdinWaiter;
		stdinWaiter = null;
		w(l);
	} else
		stdinQueue.push(l);
});

/* Tell the rig we hold the target at name, and wait for its go-ahead. */
function joinPause(name) {
	joinSay({ pause: name });
	if (stdinQueue.length > 0)
		return Promise.resolve(stdinQueue.shift());
	return new Promise((resolve) => { stdinWaiter = resolve; });
}

/* Run one request as a named step; its body is kept in the summary. */
async function joinStep(name, promise) {
	const t0 = Date.now();
	try {
		const r = await promise;
		steps.push({ step: name, success: r.success !== false,
		    ms: Date.now() - t0, body: r.body || null });
		return r;
	} catch (e) {
		steps.push({ step: name, success: false, ms: Date.now() - t0,
		    message: String(e && e.message || e) });
		throw new Error(name + ': ' + (e && e.message || e));
	}
}

/* The n-th stopped event (from 1), waiting for it up to the bound. */
function joinStopped(n) {
	if (stops.length >= n)
		return Promise.resolve(stops[n - 1]);
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			stopWaiter = null;
			reject(new Error('no stopped event #' + n + ' within ' +
			    bound + ' ms'));
		}, bound);
		stopWaiter = () => {
			if (stops.length < n)
				return;
			clearTimeout(timer);
			stopWaiter = null;
			resolve(stops[n - 1]);
		};
	});
}

/* Look at a stop as an IDE does: frames, scopes, variables, evaluations. */
async function joinLook(dc, tag, stop) {
	const threadId = stop.body.threadId;
	const st = await joinStep('stackTrace' + tag,
	    dc.stackTraceRequest({ threadId, startFrame: 0, levels: 20 }));
	const frames = st.body.stackFrames;
	const top = frames[0];
	const sc = await joinStep('scopes' + tag,
	    dc.scopesRequest({ frameId: top.id }));
	const look = {
		reason: stop.body.reason,
		threadId,
		frames: frames.map((f) => ({ name: f.name, line: f.line,
		    source: f.source && f.source.path })),
		variables: {},
		evaluate: {},
	};
	for (const scope of sc.body.scopes) {
		if (scope.expensive || !scope.variablesReference)
			continue;
		const v = await joinStep('variables' + tag + ' ' + scope.name,
		    dc.variablesRequest({
		    variablesReference: scope.variablesReference }));
		for (const one of v.body.variables)
			look.variables[one.name] = one.value;
	}
	for (const expr of plan.evaluate || []) {
		const e = await joinStep('evaluate' + tag + ' ' + expr,
		    dc.evaluateRequest({ expression: expr, frameId: top.id,
		    context: 'watch' }));
		look.evaluate[expr] = e.body.result;
	}
	return look;
}

/* The whole sequence; what it saw goes into summary. */
async function joinRun(dc, summary) {
	await dc.start();
	const init = await joinStep('initialize', dc.initializeRequest());
	summary.adapter = {
		functionBreakpoints: !!init.body.supportsFunctionBreakpoints,
		configurationDone: !!init.body.supportsConfigurationDoneRequest,
	};
	const initialized = dc.waitForEvent('initialized', bound);
	/* Awaited after attach; a failed attach must not leave it unhandled. */
	initialized.catch(() => {});
	const attachArgs = Object.assign({ gdb: plan.gdb }, plan.attach || {});
	await joinStep('attach', dc.attachRequest(attachArgs));
	await initialized;
	const sb = await joinStep('setBreakpoints', dc.setBreakpointsRequest({
		source: { path: plan.source },
		breakpoints: [{ line: plan.line }],
	}));
	summary.lineBreakpoint = sb.body.breakpoints[0] || null;
	const fb = await joinStep('setFunctionBreakpoints',
	    dc.setFunctionBreakpointsRequest({
	    breakpoints: [{ name: plan.function }] }));
	summary.functionBreakpoint = fb.body.breakpoints[0] || null;
	await joinStep('configurationDone', dc.configurationDoneRequest());

	const stop1 = await joinStopped(1);
	summary.stop1 = await joinLook(dc, '1', stop1);
	await joinPause('stop1');
	const seen = stops.length;
	await joinStep('continue', dc.continueRequest({
	    threadId: stop1.body.threadId }));
	const stop2 = await joinStopped(seen + 1);
	summary.stop2 = await joinLook(dc, '2', stop2);
	await joinPause('stop2');
}

/* Drive the adapter, always disconnect, and print the summary. */
async function joinMain() {
	const env = Object.assign({}, process.env, plan.env || {});
	const dc = new DebugClient('node', plan.adapter, 'gdb', { env },
	    true);
	dc.defaultTimeout = bound;
	dc.on('stopped', (e) => {
		stops.push(e);
		if (stopWaiter)
			stopWaiter();
	});
	dc.on('output', (e) => {
		if (outputs.length < 200)
			outputs.push(e.body.category + ': ' + e.body.output);
	});
	const summary = { steps, stops: [], outputs };
	let failure = null;
	try {
		await joinRun(dc, summary);
	} catch (e) {
		failure = String(e && e.message || e);
	}
	try {
		await joinStep('disconnect', dc.disconnectRequest({}));
	} catch (e) {
		failure = failure || String(e && e.message || e);
	}
	summary.stops = stops.map((e) => e.body);
	summary.failure = failure;
	summary.ok = !failure && steps.every((s) => s.success);
	joinSay({ summary });
	dc.stopAdapter();
	stdinLines.close();
	process.exit(summary.ok ? 0 : 1);
}

joinMain();
