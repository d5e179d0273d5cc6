-- Headless Neovim (0.7+) with the Steadyhand plugin against a slow server: slow_server.py
-- holds each `steadyhand.changes` request back for SH_DELAY seconds. The plugin must return
-- from :SteadyhandChanges at once, the editor must run timers and typed keys while the answer
-- is on its way, and the answer must be shown when it comes. Then the server stops while a
-- command waits: the command ends with an error instead of waiting for good. First of all, a
-- command given while the server is still starting returns at once and is sent once it is ready.
-- Inputs (environment): SH_WORKSPACE, SH_RESULT, SH_PLUGIN, SH_PYTHON, SH_SLOW_SERVER, SH_DELAY.
local ws = os.getenv('SH_WORKSPACE')
local result_path = os.getenv('SH_RESULT')
local uv = vim.loop

local R = { events = {}, messages = {}, steps = {} }
local t0 = uv.now()

vim.notify = function(msg, level)
  table.insert(R.messages, { msg = msg, level = level, ms = uv.now() - t0 })
end

local function event(name, extra)
  local e = extra or {}
  e.name, e.ms = name, uv.now() - t0
  table.insert(R.events, e)
end

local finished = false
local function finish()
  if finished then return end
  finished = true
  local fh = assert(io.open(result_path, 'w'))
  fh:write(vim.fn.json_encode(R))
  fh:close()
  vim.cmd('qa!')
end

local function main()
  vim.opt.rtp:append(os.getenv('SH_PLUGIN'))
  local sh = require('steadyhand')
  vim.fn.mkdir(ws .. '/.git', 'p')
  local app = ws .. '/app.py'
  local fh = assert(io.open(app, 'w'))
  fh:write('x = 1\ny = 2\n')
  fh:close()
  local slow = { os.getenv('SH_PYTHON'), os.getenv('SH_SLOW_SERVER'), os.getenv('SH_DELAY'), 'steadyhand.changes' }
  sh.setup({ cmd = vim.list_extend(slow, { '--', 'steadyhand', 'serve' }), timeout_ms = 20000 })
  vim.cmd('edit ' .. vim.fn.fnameescape(app))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = sh.client()
  -- 0. A command sent before the server is ready returns at once and is sent once it is.
  R.early = { ready_when_sent = client.initialized == true }
  sh.call('steadyhand.ping', vim.empty_dict(), function(r, why)
    R.early.answer = r or { call_error = why }
    R.early.ready_when_answered = client.initialized == true
  end)
  R.early.returned = true
  vim.wait(20000, function() return R.early.answer ~= nil end, 20)
  sh.config.timeout_ms = 600 -- from now on: a command waiting longer says so
  R.initialized = client.initialized == true
  if not R.initialized then return finish() end

  -- One agent change to list, made straight through Neovim's client (this script may wait).
  local function call(command, params)
    local request = { command = command, arguments = { params } }
    local response
    if vim.fn.has('nvim-0.11') == 1 then
      response = client:request_sync('workspace/executeCommand', request, 20000, bufnr)
    else
      response = client.request_sync('workspace/executeCommand', request, 20000, bufnr)
    end
    return response and response.result or { call_error = vim.inspect(response) }
  end
  call('steadyhand.read', { file_path = app })
  R.steps.edit = call('steadyhand.edit', { file_path = app, old_string = 'y = 2', new_string = 'y = 3' })

  -- 2. The server stops while :SteadyhandChanges waits for it.
  local function server_stops()
    sh.changes(nil, function(r, err)
      event('ended', { result = r ~= nil, error = err })
      finish()
    end)
    vim.defer_fn(function()
      event('stop')
      vim.lsp.stop_client(client.id, true)
    end, 200)
  end

  -- 1. :SteadyhandChanges while the user goes on working.
  vim.api.nvim_create_autocmd('User', {
    pattern = 'SteadyhandDone',
    once = true,
    callback = function()
      event('answer', {
        quickfix = #vim.fn.getqflist(),
        first_line = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1],
      })
      vim.schedule(server_stops)
    end,
  })
  vim.api.nvim_create_autocmd('InsertLeave', {
    once = true,
    callback = function()
      event('keys', { first_line = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] })
    end,
  })
  t0 = uv.now()
  vim.defer_fn(function() event('timer') end, 100)
  -- typed keys wait in the input queue until Neovim reads input again
  local keys = vim.api.nvim_replace_termcodes('Otyped while waiting<Esc>', true, false, true)
  vim.api.nvim_feedkeys(keys, 'nt', false)
  vim.cmd('SteadyhandChanges')
  event('returned', { in_flight = sh.in_flight })
  -- this script ends here: Neovim goes back to its main loop, where input is read
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  R.fatal = err
  finish()
end
vim.defer_fn(function()
  R.gave_up = true
  finish()
end, 15000)
