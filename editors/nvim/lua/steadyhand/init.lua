-- Steadyhand for Neovim: starts `steadyhand serve` for the buffers under a project root and
-- adds commands to review and take back agent changes.
--
--   require('steadyhand').setup({ ... })   -- see M.defaults
--
-- :SteadyhandChanges [path]      the recorded changes, newest first, in the quickfix list (with
--                                the checkpoints among them)
-- :SteadyhandDiff {id}           a tab diffing the texts before and after a change
-- :SteadyhandTakeBack[!] {id}    take one change back (! when the file changed since: anyway)
-- :SteadyhandCheckpoint [label]  mark a point in the session
-- :SteadyhandRewind {checkpoint} restore every file the session changed since a checkpoint
--
-- Every command returns at once: the server is asked asynchronously and the answer is shown
-- when it comes, so the editor never waits on it. `User SteadyhandDone` fires after each answer.
--
-- Works on Neovim 0.7 and newer; APIs of later releases are used only where they exist.

local M = {}

M.defaults = {
  -- How to start the server.
  cmd = { 'steadyhand', 'serve' },
  -- A buffer's root is the nearest folder above it holding one of these.
  root_markers = { '.git', '.hg', '.svn', '.jj' },
  -- Without a marker above it, a buffer under the current directory uses that directory
  -- (false: such a buffer gets no server).
  cwd_fallback = true,
  -- The agent session the commands act for (checkpoint, rewind).
  session = 'default',
  -- Sent as initializationOptions (see docs/protocol.md for the settings).
  init_options = { saveAfterEdit = 'whenClean' },
  -- Start the server for buffers as they are read (false: only `require('steadyhand').attach()`).
  autostart = true,
  -- After this many milliseconds without an answer a command says it is still waiting (the
  -- editor never waits on it); a server that has not started by then is given up on.
  timeout_ms = 30000,
}

M.config = vim.deepcopy(M.defaults)
-- root folder -> client id
M.clients = {}
-- The last answered command's result (for scripts and tests).
M.last = nil

local NAME = 'steadyhand'
local uv = vim.uv or vim.loop

local function has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

local function notify(message, level)
  vim.notify(message, level or vim.log.levels.INFO, { title = 'Steadyhand' })
end

-- Client capabilities: versioned edits, and saving on the server's request.
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  -- Neovim applies versioned edits (and refuses one made for an older buffer) without saying so
  caps.workspace.workspaceEdit.documentChanges = true
  caps.experimental = { steadyhand = { saveDocuments = true } }
  return caps
end

local function buffer_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  return (versions and versions[bufnr]) or vim.api.nvim_buf_get_changedtick(bufnr)
end

M.handlers = {
  -- The server asks to save the buffers it edited: save each one unless it was typed in since.
  ['steadyhand/saveDocuments'] = function(_, params)
    local versions = type(params.versions) == 'table' and params.versions or {}
    local saved, results = {}, {}
    for _, uri in ipairs(params.uris or {}) do
      local bufnr = vim.uri_to_bufnr(uri)
      if versions[uri] and buffer_version(bufnr) > versions[uri] then
        table.insert(results, { uri = uri, saved = false, error = 'the buffer changed since' })
      else
        local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
          vim.cmd('silent write')
        end)
        if ok then
          table.insert(saved, uri)
          table.insert(results, { uri = uri, saved = true })
        else
          table.insert(results, { uri = uri, saved = false, error = tostring(err) })
        end
      end
    end
    return { saved = saved, results = results }
  end,
}

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

-- The root of a file: the nearest folder above it with a root marker.
function M.root_of(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while dir and dir ~= '' do
    for _, marker in ipairs(M.config.root_markers) do
      if exists(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  if M.config.cwd_fallback then
    local cwd = uv.cwd()
    local full = vim.fn.fnamemodify(path, ':p')
    if cwd and full:sub(1, #cwd + 1) == cwd .. '/' then
      return cwd
    end
  end
  return nil
end

local function client_config(root)
  return {
    name = NAME,
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    capabilities = M.capabilities(),
    handlers = M.handlers,
    init_options = M.config.init_options,
  }
end

local function live(id)
  return id and vim.lsp.get_client_by_id(id) ~= nil
end

-- Start (or reuse) the server for the buffer's root and attach the buffer; the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  local root = M.root_of(name)
  if not root then
    return nil
  end
  local id = M.clients[root]
  if has('0.8') then
    -- starts a client for this root, or reuses the running one, and attaches the buffer
    id = vim.lsp.start(client_config(root), {
      bufnr = bufnr,
      reuse_client = function(client, config)
        return client.name == NAME and client.config.root_dir == config.root_dir
      end,
    })
  else
    if not live(id) then
      id = vim.lsp.start_client(client_config(root))
    end
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  M.clients[root] = id
  return id
end

-- The client for the current buffer, else any Steadyhand client.
function M.client()
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = name ~= '' and M.root_of(name) or nil
  if root and live(M.clients[root]) then
    return vim.lsp.get_client_by_id(M.clients[root])
  end
  for _, id in pairs(M.clients) do
    if live(id) then
      return vim.lsp.get_client_by_id(id)
    end
  end
  local id = M.attach(bufnr)
  return id and vim.lsp.get_client_by_id(id) or nil
end

-- Commands that have not been answered yet (a statusline may show it, a script may wait on it).
M.in_flight = 0

local function send(client, method, params, handler)
  if has('0.11') then
    return client:request(method, params, handler, nil)
  end
  return client.request(method, params, handler, nil)
end

local function seconds(ms)
  return string.format('%d s', math.floor(ms / 1000 + 0.5))
end

-- Run tick() on the main loop every `ms` milliseconds until it returns true (or fails).
local function every(ms, tick)
  local timer, stopped = uv.new_timer(), false
  timer:start(
    ms,
    ms,
    vim.schedule_wrap(function()
      if stopped then
        return
      end
      local ok, done = pcall(tick)
      if done or not ok then
        stopped = true
        timer:stop()
        timer:close()
      end
      if not ok then
        error(done)
      end
    end)
  )
end

-- Run fn(client) once the client is initialized, else fn(nil, why), without blocking the editor.
local function when_ready(client, fn)
  if client.initialized then
    return fn(client)
  end
  local started = uv.now()
  every(20, function()
    local now = vim.lsp.get_client_by_id(client.id)
    if now and now.initialized then
      fn(now)
    elseif not now then
      fn(nil, 'the server stopped before it was ready')
    elseif uv.now() - started >= M.config.timeout_ms then
      fn(nil, 'the server did not start within ' .. seconds(M.config.timeout_ms))
    else
      return false
    end
    return true
  end)
end

-- While a command waits: say so once it has waited timeout_ms, and end the wait if the server
-- goes away (it would never answer).
local function watch(client_id, label, finished, fail)
  local started, warned = uv.now(), false
  every(250, function()
    if finished() then
      return true
    elseif not vim.lsp.get_client_by_id(client_id) then
      fail('the server stopped before answering')
      return true
    elseif not warned and uv.now() - started >= M.config.timeout_ms then
      warned = true
      notify(
        string.format(
          'Steadyhand: still waiting for the answer to %s (%s); the editor stays usable and the answer is shown when it comes.',
          label,
          seconds(uv.now() - started)
        ),
        vim.log.levels.WARN
      )
    end
    return false
  end)
end

-- Run a Steadyhand command with one parameter object, without waiting for it (the editor never
-- freezes). When the server answers, on_result(result) runs on the main loop; on_result(nil, why)
-- when there is no answer. `label` names the command in messages (default: `command`).
-- Returns false (and calls on_result with why) when there is no server to ask.
function M.call(command, params, on_result, label)
  on_result = on_result or function() end
  M.in_flight = M.in_flight + 1
  local finished = false
  local function finish(result, err)
    if finished then
      return
    end
    finished = true
    M.in_flight = M.in_flight - 1
    if result ~= nil then
      M.last = result
    end
    on_result(result, err)
  end
  local client = M.client()
  if not client then
    vim.schedule(function()
      finish(nil, 'no Steadyhand server: open a file under a project root first')
    end)
    return false
  end
  watch(client.id, label or command, function()
    return finished
  end, function(why)
    finish(nil, why)
  end)
  when_ready(client, function(ready, why)
    if not ready then
      return finish(nil, why)
    end
    -- no buffer: every attached buffer's pending changes are sent first
    local sent = send(ready, 'workspace/executeCommand', {
      command = command,
      arguments = { params or vim.empty_dict() },
    }, function(err, result)
      vim.schedule(function()
        if err then
          finish(nil, err.message or vim.inspect(err))
        elseif type(result) ~= 'table' then
          finish(nil, 'the server answered without a result')
        else
          finish(result)
        end
      end)
    end)
    if not sent then
      finish(nil, 'the server has stopped')
    end
  end)
  return true
end

-- Wording for people. The server's `message` is written for a model ("call undo again with
-- force: true"); what Neovim shows is built from the result's fields and error code, in
-- Neovim's own commands. Where no wording of its own fits, the server's sentences are shown
-- without those that tell the model what to call.

local MODEL_WORDS = {
  '%f[%w]call%f[%W]',
  '%f[%w]calls%f[%W]',
  '%f[%w]pass%f[%W]',
  '%f[%w]retry',
  'redo your',
  'ask the user',
  'tell the user',
  'with the user',
  'read the file',
  'read it',
  'read them',
  'read on',
  'read more',
  '%f[%w]report%f[%W]',
  'file_path',
  'old_string',
  'new_string',
  'force: true',
  'offset=',
  'limit=',
}

local function model_directed(text)
  local lower = text:lower()
  for _, pattern in ipairs(MODEL_WORDS) do
    if lower:find(pattern) then
      return true
    end
  end
  return false
end

-- The server's message without the sentences, clauses and remarks in parentheses that tell
-- a model what to do next.
function M.for_person(message)
  if type(message) ~= 'string' then
    return ''
  end
  local out = {}
  for _, line in ipairs(vim.split(message, '\n', { plain = true })) do
    line = line:gsub('%s*%b()', function(aside)
      return model_directed(aside) and '' or nil
    end)
    local kept = {}
    local marked = line:gsub('([.!?])%s+(%u)', '%1\1%2')
    for _, sentence in ipairs(vim.split(marked, '\1', { plain = true })) do
      local clauses = {}
      for _, clause in ipairs(vim.split(sentence, '; ', { plain = true })) do
        if not model_directed(clause) then
          table.insert(clauses, clause)
        end
      end
      if #clauses > 0 then
        local s = table.concat(clauses, '; ')
        local stop = sentence:match('[.!?]$')
        if stop and not s:match('[.!?]$') then
          s = s .. stop
        end
        table.insert(kept, s)
      end
    end
    if #kept > 0 then
      table.insert(out, table.concat(kept, ' '))
    end
  end
  return table.concat(out, '\n')
end

local function rel(path)
  if type(path) ~= 'string' or path == '' then
    return 'the file'
  end
  return vim.fn.fnamemodify(path, ':~:.')
end

local function count(r, name)
  local listed = type(r[name]) == 'table' and #r[name] or 0
  return listed + (tonumber(r[name .. '_more']) or 0)
end

local function counts(r)
  if type(r.added) == 'number' and type(r.removed) == 'number' then
    return string.format(' (+%d/-%d)', r.added, r.removed)
  end
  return ''
end

local BRING_BACK = ' It is recorded as a change of its own: taking that one back (:SteadyhandChanges) brings this back.'

local function taken_back(params, r)
  local id = r.undone or params.id or '?'
  local text
  if r.type == 'delete' then
    text = string.format('Took back change %s, which created %s: the file was deleted.', id, rel(r.path))
  elseif r.type == 'revert' then
    text = string.format(
      'Took back change %s in %s%s, keeping the later changes to other lines.',
      id,
      rel(r.path),
      counts(r)
    )
  else
    text = string.format('Took back change %s in %s%s.', id, rel(r.path), counts(r))
  end
  if r.on_disk == false then
    text = text .. ' It is in the buffer; the file on disk is not saved yet.'
  end
  return text .. BRING_BACK
end

local function rewound(params, r)
  local restored, deleted, skipped = count(r, 'restored'), count(r, 'deleted'), count(r, 'skipped')
  local unchanged = count(r, 'unchanged')
  local checkpoint = params.checkpoint or r.checkpoint or '?'
  if restored + deleted + skipped + unchanged == 0 then
    return string.format(
      'Nothing to rewind: session %s changed no file since checkpoint %s.',
      params.session or M.config.session,
      checkpoint
    ),
      vim.log.levels.INFO
  end
  local lines = {
    string.format(
      'Rewound to checkpoint %s: %d restored, %d deleted, %d skipped%s.',
      checkpoint,
      restored,
      deleted,
      skipped,
      unchanged > 0 and string.format(', %d already as at the checkpoint', unchanged) or ''
    ),
  }
  if type(r.not_on_disk) == 'table' and #r.not_on_disk > 0 then
    local names = vim.tbl_map(rel, r.not_on_disk)
    table.insert(lines, 'In the buffer only, not yet on disk: ' .. table.concat(names, ', '))
  end
  for _, s in ipairs(type(r.skipped) == 'table' and r.skipped or {}) do
    table.insert(lines, string.format('skipped %s: %s', rel(s.path), M.for_person(s.reason)))
  end
  if skipped > 0 then
    table.insert(lines, 'Skipped files keep what they hold now.')
  end
  return table.concat(lines, '\n'), skipped > 0 and vim.log.levels.WARN or vim.log.levels.INFO
end

-- What to do next after a refusal, in Neovim's commands.
local function next_step(command, params, r)
  local code = r.error
  if code == 'no_history' and r.id ~= nil and r.path == nil then
    return ':SteadyhandChanges lists the changes and their ids.'
  end
  if command == 'steadyhand.undo' then
    if code == 'stale' and r.can_force then
      return 'To take it back anyway (what is there now is kept in history): :SteadyhandTakeBack! '
        .. tostring(params.id)
    elseif code == 'conflict' and type(r.later) == 'table' and #r.later > 0 then
      return 'To start with the newest later change: :SteadyhandTakeBack ' .. tostring(r.later[#r.later])
    end
  elseif command == 'steadyhand.rewind' and code == 'no_history' then
    return ':SteadyhandRewind takes a checkpoint id or label; :SteadyhandChanges lists the checkpoints and the changes still kept.'
  end
  return nil
end

-- The text and level Neovim shows a person for a command's result or refusal.
function M.describe(command, params, r)
  params = params or {}
  if type(r) ~= 'table' then
    return nil
  end
  if r.ok == false then
    local text = M.for_person(r.message)
    if text == '' then
      text = string.format('Steadyhand refused (%s); nothing was changed.', tostring(r.error))
    end
    local step = next_step(command, params, r)
    if step and not text:find(step, 1, true) then
      text = text .. ' ' .. step
    end
    return text, vim.log.levels.WARN
  end
  if command == 'steadyhand.undo' then
    return taken_back(params, r), vim.log.levels.INFO
  elseif command == 'steadyhand.checkpoint' then
    local named = (type(r.label) == 'string' and r.label ~= '') and string.format(' (%s)', r.label) or ''
    return string.format(
      'Checkpoint %s%s set. :SteadyhandRewind %s puts back every file session %s changes after it.',
      tostring(r.checkpoint),
      named,
      named ~= '' and r.label or tostring(r.checkpoint),
      tostring(r.session or params.session)
    ),
      vim.log.levels.INFO
  elseif command == 'steadyhand.rewind' then
    return rewound(params, r)
  end
  return M.for_person(r.message), vim.log.levels.INFO
end

local function done_event()
  if #vim.api.nvim_get_autocmds({ event = 'User', pattern = 'SteadyhandDone' }) > 0 then
    vim.api.nvim_exec_autocmds('User', { pattern = 'SteadyhandDone', modeline = false })
  end
end

-- Send a command for an Ex command; once answered, show a refusal or run on_answer(result), then
-- done(result, err). Returns at once.
local function run(label, command, params, on_answer, done)
  return M.call(command, params, function(r, err)
    local ok, failure = pcall(function()
      if not r then
        notify('Steadyhand: ' .. tostring(err), vim.log.levels.ERROR)
      elseif r.ok == false then
        notify(M.describe(command, params, r))
      else
        on_answer(r)
      end
    end)
    if not ok then
      notify('Steadyhand: ' .. tostring(failure), vim.log.levels.ERROR)
    end
    done_event()
    if done then
      done(r, err)
    end
  end, label)
end

local function clock(iso)
  return (type(iso) == 'string' and iso:match('T(%d%d:%d%d:%d%d)')) or tostring(iso)
end

local function stat(c)
  if c.kind == 'create' then
    return 'created +' .. tostring(c.added)
  elseif c.kind == 'delete' then
    return 'deleted -' .. tostring(c.removed)
  end
  return '+' .. tostring(c.added) .. '/-' .. tostring(c.removed)
end

-- Whether checkpoint `cp` was set after change `c`: within a session, by the checkpoint the change
-- came after (`rank`: a checkpoint's place in the newest-first list); across sessions, by time.
local function set_after(cp, c, rank)
  if c.session == cp.session then
    return c.checkpoint == nil or c.checkpoint == vim.NIL or (rank[c.checkpoint] or 0) > rank[cp.id]
  end
  return tostring(cp.time) > tostring(c.time)
end

-- Quickfix items for the changes (newest first) with the checkpoints set among them.
local function change_items(changes, checkpoints)
  local rank = {}
  for i, cp in ipairs(checkpoints) do
    rank[cp.id] = i
  end
  local items, next_cp = {}, 1
  local function checkpoints_until(c)
    while checkpoints[next_cp] and (c == nil or set_after(checkpoints[next_cp], c, rank)) do
      local cp = checkpoints[next_cp]
      local named = (type(cp.label) == 'string' and cp.label ~= '') and (' ' .. cp.label) or ''
      table.insert(items, {
        text = string.format('checkpoint %s%s  %s  session %s', cp.id, named, clock(cp.time), cp.session),
        valid = 0,
        user_data = cp.id,
      })
      next_cp = next_cp + 1
    end
  end
  for _, c in ipairs(changes) do
    checkpoints_until(c)
    local notes = {}
    if c.current then
      table.insert(notes, 'current')
    end
    if not c.restorable then
      table.insert(notes, 'not restorable')
    end
    local note = #notes > 0 and (' (' .. table.concat(notes, ', ') .. ')') or ''
    table.insert(items, {
      filename = c.path,
      lnum = 1,
      text = string.format('%s  %s  %s  %s  session %s%s', c.id, c.tool, stat(c), clock(c.time), c.session, note),
      user_data = c.id,
    })
  end
  checkpoints_until(nil)
  return items
end

-- :SteadyhandChanges [path]
function M.changes(path, done)
  local params = { limit = 100 }
  if path and path ~= '' then
    params.path = vim.fn.fnamemodify(path, ':p')
  end
  return run(':SteadyhandChanges', 'steadyhand.changes', params, function(r)
    local items = change_items(r.changes or {}, r.checkpoints or {})
    vim.fn.setqflist({}, ' ', { title = 'Steadyhand changes', items = items })
    local shown = type(r.changes) == 'table' and #r.changes or 0
    if shown == 0 then
      notify(M.for_person(r.message))
      return
    end
    vim.cmd('copen')
    if type(r.total) == 'number' and r.total > shown then
      notify(
        string.format(
          'Showing the newest %d of %d changes; :SteadyhandChanges {file or folder} narrows the list.',
          shown,
          r.total
        )
      )
    end
  end, done)
end

local function lines_of(text)
  if text == nil or text == vim.NIL then
    return {}
  end
  text = text:gsub('\r\n', '\n'):gsub('\r', '\n')
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

local function set_filetype(bufnr, path)
  if has('0.8') then
    local ok, ft = pcall(vim.filetype.match, { filename = path, buf = bufnr })
    if ok and ft then
      vim.bo[bufnr].filetype = ft
    end
  elseif vim.filetype and vim.filetype.match then
    pcall(vim.filetype.match, path, bufnr) -- 0.7 sets the buffer's filetype itself
  end
end

local function scratch(name, text, path)
  local old = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\^$.*~[]') .. '$')
  if old > 0 then -- the same diff shown before: its buffer gives way (it is a scratch copy)
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines_of(text))
  vim.api.nvim_buf_set_name(bufnr, name)
  vim.bo[bufnr].buftype = 'nofile'
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].swapfile = false
  set_filetype(bufnr, path)
  vim.bo[bufnr].modifiable = false
  return bufnr
end

-- :SteadyhandDiff {id}
function M.diff(id, done)
  return run(':SteadyhandDiff', 'steadyhand.change', { id = id }, function(r)
    local base = vim.fn.fnamemodify(r.path, ':t')
    local left = scratch(string.format('steadyhand://%s/before/%s', id, base), r.before, r.path)
    local right = scratch(string.format('steadyhand://%s/after/%s', id, base), r.after, r.path)
    vim.cmd('tabnew')
    local empty = vim.api.nvim_get_current_buf()
    vim.api.nvim_win_set_buf(0, left)
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    vim.api.nvim_win_set_buf(0, right)
    vim.cmd('diffthis')
    if vim.api.nvim_buf_is_valid(empty) and empty ~= left and empty ~= right then
      pcall(vim.api.nvim_buf_delete, empty, { force = true })
    end
    notify(string.format('%s: %s by session %s at %s (%s)', base, r.tool, r.session, clock(r.time), stat(r)))
  end, done)
end

local function show(command, params)
  return function(r)
    notify(M.describe(command, params, r))
  end
end

-- :SteadyhandTakeBack[!] {id}
function M.take_back(id, force, done)
  local params = { id = id, force = force or nil }
  local label = force and ':SteadyhandTakeBack!' or ':SteadyhandTakeBack'
  return run(label, 'steadyhand.undo', params, show('steadyhand.undo', params), done)
end

-- :SteadyhandCheckpoint [label]
function M.checkpoint(label, done)
  local params = { session = M.config.session, label = (label and label ~= '' and label) or nil }
  return run(':SteadyhandCheckpoint', 'steadyhand.checkpoint', params, show('steadyhand.checkpoint', params), done)
end

-- :SteadyhandRewind {checkpoint}
function M.rewind(checkpoint, done)
  local params = { session = M.config.session, checkpoint = checkpoint }
  return run(':SteadyhandRewind', 'steadyhand.rewind', params, show('steadyhand.rewind', params), done)
end

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts)
end

local defined = false

local function define_commands()
  if defined then
    return
  end
  defined = true
  command('SteadyhandChanges', function(o)
    M.changes(o.args)
  end, { nargs = '?', complete = 'file', desc = 'Steadyhand: agent changes in the quickfix list' })
  command('SteadyhandDiff', function(o)
    M.diff(o.args)
  end, { nargs = 1, desc = 'Steadyhand: diff the texts before and after a change' })
  command('SteadyhandTakeBack', function(o)
    M.take_back(o.args, o.bang)
  end, { nargs = 1, bang = true, desc = 'Steadyhand: take back one change (! anyway)' })
  command('SteadyhandCheckpoint', function(o)
    M.checkpoint(o.args)
  end, { nargs = '?', desc = 'Steadyhand: mark a checkpoint in the session' })
  command('SteadyhandRewind', function(o)
    M.rewind(o.args)
  end, { nargs = 1, desc = 'Steadyhand: restore every file the session changed since a checkpoint' })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  define_commands()
  local group = vim.api.nvim_create_augroup('steadyhand', { clear = true })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(args)
        M.attach(args.buf)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end
  return M
end

return M
