# Builds baton in release mode, installs it, shows it working, wires the agent clients
# found here (Claude Code, Codex, Gemini CLI, opencode) and checks the result: what
# install.sh does, for Windows (Windows PowerShell 5.1 or PowerShell 7).
#
#   .\install\install.ps1                install into %LOCALAPPDATA%\Programs\baton\bin
#   .\install\install.ps1 -Prefix DIR    install into DIR\bin
#   .\install\install.ps1 -NoSetup       do not wire the clients (`baton setup --auto`)
#
# Windows runs no downloaded script by default; run this one as
#   powershell -ExecutionPolicy Bypass -File .\install\install.ps1
#
# Unlike install/build.sh, nothing is linked statically: that is glibc's question, and
# Windows has no glibc. The toolchain rustup installed (MSVC or GNU) builds as it does by
# default.

[CmdletBinding(PositionalBinding = $false)]
param(
    [string]$Prefix = '',
    [switch]$NoSetup,
    [switch]$Help
)

$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 2.0

$usage = @'
Builds baton in release mode, installs it, shows it working, wires the agent clients
found here (Claude Code, Codex, Gemini CLI, opencode) and checks the result.

  .\install\install.ps1                install into %LOCALAPPDATA%\Programs\baton\bin
  .\install\install.ps1 -Prefix DIR    install into DIR\bin
  .\install\install.ps1 -NoSetup       do not wire the clients (`baton setup --auto`)
'@

# One line on standard error and exit 1, as install.sh does.
function Stop-Install([string]$Message) {
    [Console]::Error.WriteLine("error: $Message")
    exit 1
}

# The same directory, however it is spelled: Windows compares paths without case, and a
# PATH entry may end in a backslash.
function Test-SameDirectory([string]$Left, [string]$Right) {
    return $Left.TrimEnd('\') -ieq $Right.TrimEnd('\')
}

function Test-OnPath([string]$PathValue, [string]$Directory) {
    foreach ($entry in ($PathValue -split ';')) {
        if ($entry -ne '' -and (Test-SameDirectory $entry $Directory)) {
            return $true
        }
    }
    return $false
}

# Tells the programs that are running (Explorer above all, which starts the next terminal)
# that the user's environment changed, as setting it through .NET would.
function Send-EnvironmentChange {
    if (-not ('Baton.Install.Win32' -as [type])) {
        Add-Type -Namespace Baton.Install -Name Win32 -MemberDefinition @'
[DllImport("user32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
public static extern IntPtr SendMessageTimeout(IntPtr hWnd, uint msg, UIntPtr wParam,
    string lParam, uint flags, uint timeout, out UIntPtr result);
'@
    }
    $HWND_BROADCAST = [IntPtr]0xffff
    $WM_SETTINGCHANGE = 0x001A
    $SMTO_ABORTIFHUNG = 0x0002
    $result = [UIntPtr]::Zero
    [void][Baton.Install.Win32]::SendMessageTimeout($HWND_BROADCAST, $WM_SETTINGCHANGE,
        [UIntPtr]::Zero, 'Environment', $SMTO_ABORTIFHUNG, 1000, [ref]$result)
}

# Puts $Directory at the end of the user's PATH (HKCU\Environment), keeping the value's
# kind: Windows' own user PATH is an expandable string (%USERPROFILE%\...), which
# [Environment]::SetEnvironmentVariable would write back expanded, as plain text.
function Add-ToUserPath([string]$Directory) {
    $key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey('Environment', $true)
    if ($null -eq $key) {
        $key = [Microsoft.Win32.Registry]::CurrentUser.CreateSubKey('Environment')
    }
    try {
        $raw = [string]$key.GetValue('Path', '',
            [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
        $kind = [Microsoft.Win32.RegistryValueKind]::ExpandString
        if ($raw -ne '') {
            $kind = $key.GetValueKind('Path')
        }
        if (Test-OnPath ([Environment]::ExpandEnvironmentVariables($raw)) $Directory) {
            return $false
        }
        $new = $Directory
        if ($raw -ne '') {
            $new = $raw.TrimEnd(';') + ';' + $Directory
        }
        $key.SetValue('Path', $new, $kind)
    }
    finally {
        $key.Close()
    }
    try {
        Send-EnvironmentChange
    }
    catch {
        # Write-Host: what a function writes to its output would become its result.
        Write-Host "note: could not tell Windows the PATH changed ($($_.Exception.Message)); sign out and in again for new terminals to see it"
    }
    return $true
}

# Builds the release binary and returns its path, as install/build.sh prints it: the
# executable cargo reports, wherever its target directory is configured.
function Build-Baton([string]$Root) {
    $manifest = Join-Path $Root 'Cargo.toml'
    $built = $null
    # cargo's JSON is UTF-8, which Windows PowerShell would read in the console's code page.
    $encoding = [Console]::OutputEncoding
    try {
        [Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
    }
    catch {
        # No console to set (output redirected): the default stands.
    }
    try {
        # Only standard output is read: cargo's progress and errors (standard error) go to
        # the console as they come. Windows PowerShell, told to stop on errors, would stop
        # on the first line of a native program's standard error redirected into it.
        & cargo build --release --locked --manifest-path $manifest `
            --message-format json-render-diagnostics | ForEach-Object {
            if ($_.StartsWith('{')) {
                $message = $_ | ConvertFrom-Json
                if ($message.reason -eq 'compiler-artifact' -and $null -ne $message.executable -and
                    (Split-Path -Leaf $message.executable) -ieq 'baton.exe') {
                    $built = $message.executable
                }
            }
        }
        $status = $LASTEXITCODE
    }
    finally {
        try {
            [Console]::OutputEncoding = $encoding
        }
        catch {
            # As above.
        }
    }
    if ($status -ne 0) {
        Stop-Install "cargo build failed (exit code $status), see above; on the MSVC toolchain the linker comes with Visual Studio's Build Tools"
    }
    if ($null -eq $built -or -not (Test-Path -LiteralPath $built -PathType Leaf)) {
        Stop-Install 'cargo did not report where it built baton'
    }
    return $built
}

if ($Help) {
    Write-Output $usage
    exit 0
}

$here = Split-Path -Parent $PSScriptRoot
if ($null -eq (Get-Command cargo -CommandType Application -ErrorAction SilentlyContinue)) {
    Stop-Install 'cargo is not installed; get Rust from https://rustup.rs and run this again (in a new terminal, which has the PATH rustup set)'
}

if ($Prefix -eq '') {
    # Where Windows keeps programs installed for one user: no administrator rights needed,
    # and not copied around with a roaming profile. (~\.local\bin is a Unix habit.)
    $localAppData = $env:LOCALAPPDATA
    if ([string]::IsNullOrEmpty($localAppData)) {
        $localAppData = Join-Path $HOME 'AppData\Local'
    }
    $Prefix = Join-Path $localAppData 'Programs\baton'
}
# Relative to where the script was run, made absolute: PATH holds absolute directories.
$Prefix = $ExecutionContext.SessionState.Path.GetUnresolvedProviderPathFromPSPath($Prefix)

Write-Output '==> building baton (release; the first build takes a few minutes)'
$built = Build-Baton $here

$bindir = Join-Path $Prefix 'bin'
$installed = Join-Path $bindir 'baton.exe'
New-Item -ItemType Directory -Force -Path $bindir | Out-Null
if (Test-Path -LiteralPath $installed) {
    # Windows will not overwrite a program while it runs (a client's `baton mcp`), but lets
    # it be renamed; the old one is removed at the next install, once it has stopped.
    $old = "$installed.old"
    Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue
    if (-not (Test-Path -LiteralPath $old)) {
        Move-Item -LiteralPath $installed -Destination $old
    }
}
Copy-Item -LiteralPath $built -Destination $installed -Force
$version = & $installed --version
if ($LASTEXITCODE -ne 0) {
    Stop-Install "$installed --version failed (exit code $LASTEXITCODE)"
}
Write-Output "==> installed $installed ($version)"

if (Add-ToUserPath $bindir) {
    Write-Output ''
    Write-Output "note: added $bindir to your user PATH; terminals opened from now on find baton"
}
if (-not (Test-OnPath $env:Path $bindir)) {
    $env:Path = $env:Path.TrimEnd(';') + ';' + $bindir
}

Write-Output ''
Write-Output '==> baton demo'
& $installed demo
if ($LASTEXITCODE -ne 0) {
    Stop-Install "baton demo failed (exit code $LASTEXITCODE)"
}

Write-Output ''
if ($NoSetup) {
    Write-Output '==> skipped wiring the agent clients (-NoSetup); later: baton setup --auto'
}
else {
    Write-Output '==> baton setup --auto (undo with: baton setup --uninstall)'
    & $installed setup --auto
    if ($LASTEXITCODE -ne 0) {
        Stop-Install "baton setup --auto failed (exit code $LASTEXITCODE)"
    }
}

Write-Output ''
Write-Output '==> baton doctor'
# Findings are for the user to read; the install itself has succeeded either way.
& $installed doctor
if ($LASTEXITCODE -ne 0) {
    Write-Output 'note: baton doctor found problems, listed above'
}
exit 0
