-- Steadyhand for Neovim: starts `steadyhand serve` for the buffers under a project root and
-- adds commands to review and take back agent changes.
--
--   require('steadyhand').setup({ ... })   -- see M.defaults
--
-- :SteadyhandChanges [path]      the recorded changes, newest first, in the quickfix list
-- :SteadyhandDiff {id}           a tab diffing the texts before and after a change
-- :SteadyhandTakeBack[!] {id}    take one change back (! when the file changed since: anyway)
-- :SteadyhandCheckpoint [label]  mark a point in the session
-- :SteadyhandRewind {checkpoint} restore every file the session changed since a checkpoint
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
  -- How long a command waits for the server, in milliseconds.
  timeout_ms = 30000,
}

M.config = vim.deepcopy(M.defaults)
-- root folder -> client id
M.clients = {}
-- The last command's result (for scripts and tests).
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

local function request_sync(client, method, params, timeout, bufnr)
  if has('0.11') then
    return client:request_sync(method, params, timeout, bufnr)
  end
  return client.request_sync(method, params, timeout, bufnr)
end

-- Run a Steadyhand command with one parameter object; its result, or nil and why not.
function M.call(command, params)
  local client = M.client()
  if not client then
    return nil, 'no Steadyhand server: open a file under a project root first'
  end
  vim.wait(M.config.timeout_ms, function()
    return client.initialized == true
  end, 20)
  -- nil buffer: every attached buffer's pending changes are sent first
  local response, err = request_sync(client, 'workspace/executeCommand', {
    command = command,
    arguments = { params or vim.empty_dict() },
  }, M.config.timeout_ms, nil)
  if not response then
    return nil, tostring(err or 'no answer')
  end
  if response.err then
    return nil, response.err.message or vim.inspect(response.err)
  end
  M.last = response.result
  return response.result
end

local function run(command, params)
  local result, err = M.call(command, params)
  if not result then
    notify('Steadyhand: ' .. err, vim.log.levels.ERROR)
    return nil
  end
  if result.ok == false then
    notify(result.message, vim.log.levels.WARN)
  end
  return result
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

-- :SteadyhandChanges [path]
function M.changes(path)
  local params = { limit = 200 }
  if path and path ~= '' then
    params.path = vim.fn.fnamemodify(path, ':p')
  end
  local r = run('steadyhand.changes', params)
  if not r or r.ok == false then
    return r
  end
  local items = {}
  for _, c in ipairs(r.changes or {}) do
    local marks = {}
    if c.current then
      table.insert(marks, 'current')
    end
    if not c.restorable then
      table.insert(marks, 'not restorable')
    end
    local note = #marks > 0 and (' (' .. table.concat(marks, ', ') .. ')') or ''
    table.insert(items, {
      filename = c.path,
      lnum = 1,
      text = string.format('%s  %s  %s  %s  session %s%s', c.id, c.tool, stat(c), clock(c.time), c.session, note),
      user_data = c.id,
    })
  end
  vim.fn.setqflist({}, ' ', { title = 'Steadyhand changes', items = items })
  if #items > 0 then
    vim.cmd('copen')
  else
    notify(r.message)
  end
  return r
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
function M.diff(id)
  local r = run('steadyhand.change', { id = id })
  if not r or r.ok == false then
    return r
  end
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
  return r
end

-- :SteadyhandTakeBack[!] {id}
function M.take_back(id, force)
  local r = run('steadyhand.undo', { id = id, force = force or nil })
  if r and r.ok then
    notify(r.message)
  elseif r and r.can_force then
    notify('To take it back anyway: :SteadyhandTakeBack! ' .. id, vim.log.levels.WARN)
  end
  return r
end

-- :SteadyhandCheckpoint [label]
function M.checkpoint(label)
  local r = run('steadyhand.checkpoint', { session = M.config.session, label = (label ~= '' and label) or nil })
  if r and r.ok then
    notify(r.message)
  end
  return r
end

-- :SteadyhandRewind {checkpoint}
function M.rewind(checkpoint)
  local r = run('steadyhand.rewind', { session = M.config.session, checkpoint = checkpoint })
  if r and r.ok then
    notify(r.message)
  end
  return r
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
